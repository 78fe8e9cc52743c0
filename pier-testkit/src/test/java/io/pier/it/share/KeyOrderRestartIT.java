package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.ChildBroker;
import io.pier.it.share.KeyHoldLog.Hold;
import io.pier.testkit.PierExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key-order rule of {@code pier.share.ordering=key} across broker restarts: a share-partition
 * loaded from its stored state learns the keys of its window from the log, and until a key's
 * earliest unsettled record is settled, nothing later of that key goes out, whether that record
 * was held, released or accepted when the broker went down. Checked with {@link KeyHoldLog}'s
 * client-side checks, across a clean restart and across kill -9 of a child broker.
 */
@Timeout(180)
class KeyOrderRestartIT {
    private static final int KEYS = 20;
    private static final int PER_KEY = 5;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.share.min.record.lock.duration.ms", "1000");

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void heldAndReleasedRecordsOfAKeyStayFirstAcrossARestart() throws Exception {
        ShareClients c = new ShareClients(PIER.bootstrapServers());
        String topic = "key-restart";
        String group = "g-key-restart";
        c.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "key",
                "share.record.lock.duration.ms", "30000");
        // One log batch, the keys interleaved (k0, k1, ..., k19, null, k0, ...): the first
        // acquisition takes one record per key and keeps the rest of the batch in its window.
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = c.producer("linger.ms", "10000", "batch.size", "1000000")) {
            for (int round = 0; round < PER_KEY; round++) {
                for (int k = 0; k < KEYS; k++) {
                    sent.add(producer.send(new ProducerRecord<>(topic, 0, "k" + k, "k" + k + "-" + round)));
                }
                sent.add(producer.send(new ProducerRecord<>(topic, 0, null, "n-" + round)));
            }
            producer.flush();
        }
        long end = sent.get(sent.size() - 1).get().offset() + 1;

        // A's first poll: accept the records of keys 4j+2, release those of keys 4j, hold the odd ones
        KeyHoldLog log = new KeyHoldLog();
        Map<String, Long> heldOrReleased = new HashMap<>();
        KafkaShareConsumer<String, String> a = c.consumer(group, "explicit");
        a.subscribe(Set.of(topic));
        long deadline = System.currentTimeMillis() + 20_000;
        List<Hold> aVerdicts = new ArrayList<>();
        for (int i = 0; i < 100 && aVerdicts.isEmpty() && heldOrReleased.isEmpty()
                && System.currentTimeMillis() < deadline; i++) {
            var records = a.poll(Duration.ofMillis(200));
            long returned = System.nanoTime();
            for (ConsumerRecord<String, String> r : records) {
                Hold h = log.delivered(0, r, returned);
                int k = r.key() == null ? 2 : Integer.parseInt(r.key().substring(1));
                if (k % 2 == 1) {
                    heldOrReleased.put(r.key(), r.offset());
                    continue;
                }
                AcknowledgeType type = k % 4 == 0 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                if (type == AcknowledgeType.RELEASE) {
                    heldOrReleased.put(r.key(), r.offset());
                }
                KeyHoldLog.verdict(h, type);
                a.acknowledge(r, type);
                aVerdicts.add(h);
            }
        }
        assertThat(aVerdicts).isNotEmpty();
        KeyHoldLog.committed(aVerdicts, a.commitSync().values().stream().allMatch(Optional::isEmpty));
        assertThat(aVerdicts).allMatch(h -> h.outcome == KeyHoldLog.Outcome.CONFIRMED);
        assertThat(log.all()).as("one record per key in the first poll")
                .filteredOn(h -> h.key != null).extracting(h -> h.key).doesNotHaveDuplicates();
        assertThat(heldOrReleased).hasSizeGreaterThan(5);

        // When the broker restarts with those records held or released
        PIER.restart();
        closeQuietly(a);

        // Then a new consumer gets each such key's held or released record before anything later of it
        ShareClients after = new ShareClients(PIER.bootstrapServers());
        try (KafkaShareConsumer<String, String> b = after.consumer(group, "explicit")) {
            b.subscribe(Set.of(topic));
            long until = System.currentTimeMillis() + 30_000;
            for (int i = 0; i < 1000 && System.currentTimeMillis() < until && startOffset(after, group, topic) < end; i++) {
                var records = b.poll(Duration.ofMillis(200));
                long returned = System.nanoTime();
                List<Hold> verdicts = new ArrayList<>();
                for (ConsumerRecord<String, String> r : records) {
                    Hold h = log.delivered(1, r, returned);
                    KeyHoldLog.verdict(h, AcknowledgeType.ACCEPT);
                    b.acknowledge(r, AcknowledgeType.ACCEPT);
                    verdicts.add(h);
                }
                if (!verdicts.isEmpty()) {
                    KeyHoldLog.committed(verdicts, b.commitSync().values().stream().allMatch(Optional::isEmpty));
                }
            }
        }
        List<Hold> all = log.all();
        List<String> order = log.orderViolations();
        assertThat(order).as("later record of a key before the earlier one settled:%n%s", KeyHoldLog.first(order))
                .isEmpty();
        assertThat(log.overlaps()).isEmpty();
        assertThat(log.acceptOrderViolations()).isEmpty();
        heldOrReleased.forEach((key, offset) -> {
            Hold first = all.stream().filter(h -> h.consumer == 1 && key.equals(h.key)).findFirst().orElseThrow();
            assertThat(first.offset).as("first record of %s after the restart", key).isEqualTo(offset);
            assertThat(first.count).as("its delivery count").isGreaterThanOrEqualTo((short) 2);
        });
        for (int k = 0; k < KEYS; k++) {
            String key = "k" + k;
            List<Long> offsets = all.stream().filter(h -> h.consumer == 1 && key.equals(h.key)).map(h -> h.offset)
                    .toList();
            assertThat(offsets).as("offsets of %s after the restart", key).isSorted().doesNotHaveDuplicates();
        }
        assertThat(startOffset(after, group, topic)).isEqualTo(end);
    }

    /**
     * A short kill -9 run: three consumers (random ACCEPT and RELEASE, sometimes a record kept past
     * its lock) over 50 keys while a child broker is SIGKILLed and restarted a few times;
     * {@link KeyHoldLog}'s checks over the whole run, and in the end everything settles.
     * {@code -Dpier.keyorder.seed=N} replays a run.
     */
    @Test
    void keyOrderHoldsAcrossKillNine() throws Exception {
        long seed = Long.getLong("pier.keyorder.seed", System.nanoTime());
        System.out.printf("KeyOrderRestartIT kill -9 seed %d%n", seed);
        Random random = new Random(seed);
        String topic = "key-kill";
        String group = "g-key-kill";
        int lockMs = 3000;
        ChildBroker broker = new ChildBroker(dataDir, scratch, "group.share.min.record.lock.duration.ms=1000");
        KeyHoldLog log = new KeyHoldLog();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        try {
            broker.start(0);
            ShareClients c = new ShareClients(broker.bootstrapServers());
            c.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "key",
                    "share.record.lock.duration.ms", String.valueOf(lockMs), "share.delivery.count.limit", "10");
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            try (KafkaProducer<String, String> producer = c.producer("linger.ms", "5")) {
                for (int i = 0; i < 1500; i++) {
                    String key = random.nextInt(20) == 0 ? null : "k" + random.nextInt(50);
                    sent.add(producer.send(new ProducerRecord<>(topic, 0, key, "v" + i)));
                }
                producer.flush();
            }
            long end = sent.get(sent.size() - 1).get().offset() + 1;
            for (int i = 0; i < 3; i++) {
                int id = i;
                Random r = new Random(seed * 31 + i);
                Thread t = new Thread(() -> {
                    try {
                        consume(c, id, topic, group, r, log, running, lockMs);
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "key-kill-consumer-" + i);
                threads.add(t);
                t.start();
            }
            for (int cycle = 1; cycle <= 3; cycle++) {
                long target = confirmedAccepts(log) + 100 + random.nextInt(150);
                await("progress before kill " + cycle).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                        .until(() -> confirmedAccepts(log) >= target);
                assertThat(broker.kill()).isTrue();
                broker.start(cycle);
            }
            await("everything settled").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions().until(() -> startOffset(c, group, topic) >= end);
        } finally {
            running.set(false);
            for (Thread t : threads) {
                t.join(30_000);
            }
            broker.close();
        }
        List<Hold> all = log.all();
        System.out.printf("KeyOrderRestartIT kill -9: %d deliveries, %d confirmed%n", all.size(),
                all.stream().filter(h -> h.outcome == KeyHoldLog.Outcome.CONFIRMED).count());
        assertThat(errors).isEmpty();
        List<String> order = log.orderViolations();
        assertThat(order).as("seed %d: later record of a key before the earlier one settled:%n%s", seed,
                KeyHoldLog.first(order)).isEmpty();
        List<String> overlaps = log.overlaps();
        assertThat(overlaps).as("seed %d: overlapping holds:%n%s", seed, KeyHoldLog.first(overlaps)).isEmpty();
        List<String> accepts = log.acceptOrderViolations();
        assertThat(accepts).as("seed %d:%n%s", seed, KeyHoldLog.first(accepts)).isEmpty();
    }

    private static long confirmedAccepts(KeyHoldLog log) {
        return log.all().stream()
                .filter(h -> h.type == AcknowledgeType.ACCEPT && h.outcome == KeyHoldLog.Outcome.CONFIRMED).count();
    }

    private static void consume(ShareClients c, int id, String topic, String group, Random random, KeyHoldLog log,
            AtomicBoolean running, int lockMs) throws InterruptedException {
        try (KafkaShareConsumer<String, String> consumer = c.consumer(group, "explicit", "max.poll.records", "20",
                "request.timeout.ms", "5000", "reconnect.backoff.max.ms", "250")) {
            consumer.subscribe(Set.of(topic));
            for (int polls = 0; polls < 100_000 && running.get(); polls++) {
                List<Hold> verdicts = new ArrayList<>();
                try {
                    var records = consumer.poll(Duration.ofMillis(100));
                    long returned = System.nanoTime();
                    boolean holdOne = random.nextInt(30) == 0;
                    for (ConsumerRecord<String, String> r : records) {
                        Hold h = log.delivered(id, r, returned);
                        if (holdOne) {
                            h.heldPastLock = true; // its verdict, after the lock, proves nothing
                            holdOne = false;
                            Thread.sleep(lockMs + 500);
                        }
                        AcknowledgeType type = random.nextInt(6) == 0 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                        KeyHoldLog.verdict(h, type);
                        consumer.acknowledge(r, type);
                        verdicts.add(h);
                    }
                    if (verdicts.isEmpty()) {
                        continue;
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(5));
                    KeyHoldLog.committed(verdicts,
                            !result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty));
                } catch (KafkaException | IllegalStateException e) {
                    KeyHoldLog.committed(verdicts, false); // the broker went away: indeterminate
                }
            }
        }
    }

    private static long startOffset(ShareClients c, String group, String topic) throws Exception {
        try (Admin admin = c.admin()) {
            Map<TopicPartition, SharePartitionOffsetInfo> info = admin.listShareGroupOffsets(
                    Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo p = info == null ? null : info.get(new TopicPartition(topic, 0));
            return p == null ? -1 : p.startOffset();
        }
    }

    private static void closeQuietly(KafkaShareConsumer<String, String> consumer) {
        try {
            consumer.close(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            // its broker went away under it
        }
    }
}
