package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.share.KeyHoldLog.Hold;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

/**
 * Key-ordered share groups ({@code pier.share.ordering=key}, issue 18) seen through the stock
 * {@code KafkaShareConsumer}: a keyed record is acquirable only when every earlier record of its
 * key in the partition is ACKNOWLEDGED or ARCHIVED; null-key records are unordered.
 *
 * <p>The main test runs 8 explicit-mode consumers of one group over one partition holding a few
 * thousand records of 200 keys (and some without a key). Each consumer, seeded, mostly ACCEPTs,
 * sometimes RELEASEs or REJECTs, and now and then keeps one record past its lock before
 * acknowledging it (that late acknowledgement is expected to fail). Everything each consumer saw,
 * with client-side instants, goes to a {@link KeyHoldLog}, whose javadoc explains why its checks
 * cannot blame legitimate timing: (a) confirmed ACCEPTs of a key come in increasing offset order;
 * (b) no delivery of a later record of a key returned before a confirmed verdict on an earlier one
 * was even sent, and no two consumers' certain holds of one key overlap; (c) the group's start
 * offset reaches the end of the partition (everything accepted or archived). The control runs the
 * same workload with {@code pier.share.ordering=none} and requires (b) to find overlaps, so (b)
 * is shown able to fail. The seed is printed; {@code -Dpier.keyorder.seed=N} replays one.
 */
@Timeout(120)
class KeyOrderedShareIT {
    private static final int LOCK_MS = 2000;
    private static final int KEYS = 200;
    private static final int RECORDS = 3000;
    private static final int CONSUMERS = 8;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.min.record.lock.duration.ms", "1000",
            "group.share.record.lock.duration.ms", String.valueOf(LOCK_MS));

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void eightConsumersNeverHoldOneKeyAtOnceAndEveryRecordSettles() throws Exception {
        long seed = Long.getLong("pier.keyorder.seed", System.nanoTime());
        System.out.printf("KeyOrderedShareIT seed %d%n", seed);
        String topic = "key-ordered";
        String group = "g-key-ordered";
        clients.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "key",
                "share.record.lock.duration.ms", String.valueOf(LOCK_MS), "share.delivery.count.limit", "4");
        long[] end = new long[1];
        KeyHoldLog log = runWorkload(topic, group, seed, () -> end[0] = produceWorkload(topic, new Random(seed)),
                end, Duration.ofSeconds(45));

        List<Hold> all = log.all();
        System.out.printf("KeyOrderedShareIT: %d deliveries, %d confirmed, %d held past lock%n", all.size(),
                all.stream().filter(h -> h.outcome == KeyHoldLog.Outcome.CONFIRMED).count(),
                all.stream().filter(h -> h.heldPastLock).count());
        List<String> order = log.orderViolations();
        assertThat(order).as("seed %d: later record of a key delivered before the earlier one settled:%n%s", seed,
                KeyHoldLog.first(order)).isEmpty();
        List<String> overlaps = log.overlaps();
        assertThat(overlaps).as("seed %d: two consumers held one key at once:%n%s", seed, KeyHoldLog.first(overlaps))
                .isEmpty();
        List<String> accepts = log.acceptOrderViolations();
        assertThat(accepts).as("seed %d: accepts out of offset order:%n%s", seed, KeyHoldLog.first(accepts)).isEmpty();
        // the checks had something to bite on: records were released, rejected, held past their lock
        assertThat(all).anyMatch(h -> h.type == AcknowledgeType.RELEASE && h.outcome == KeyHoldLog.Outcome.CONFIRMED);
        assertThat(all).anyMatch(h -> h.heldPastLock);
        assertThat(all).anyMatch(h -> h.key == null);
        assertThat(all.stream().map(h -> h.consumer).distinct().count()).isGreaterThan(1);
        assertThat(startOffset(group, topic)).as("seed %d: group start offset (everything settled)", seed)
                .isEqualTo(end[0]);
    }

    @Test
    void controlWithoutOrderingShowsOverlappingHoldsOfOneKey() throws Exception {
        long seed = Long.getLong("pier.keyorder.seed", System.nanoTime());
        System.out.printf("KeyOrderedShareIT control seed %d%n", seed);
        String topic = "key-unordered";
        String group = "g-key-unordered";
        clients.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "none",
                "share.record.lock.duration.ms", String.valueOf(LOCK_MS), "share.delivery.count.limit", "4");
        long[] end = new long[1];
        KeyHoldLog log = runWorkload(topic, group, seed, () -> end[0] = produceWorkload(topic, new Random(seed)),
                end, Duration.ofSeconds(30));

        // The same checks that must find nothing under ordering by key do find something here.
        List<String> overlaps = log.overlaps();
        List<String> order = log.orderViolations();
        System.out.printf("KeyOrderedShareIT control: %d deliveries, %d overlaps, %d order findings, e.g.%n%s%n",
                log.all().size(), overlaps.size(), order.size(), KeyHoldLog.first(overlaps.subList(0,
                        Math.min(3, overlaps.size()))));
        assertThat(overlaps).as("overlapping holds of one key without ordering").isNotEmpty();
        assertThat(order).as("out-of-order deliveries without ordering").isNotEmpty();
        assertThat(startOffset(group, topic)).isEqualTo(end[0]);
    }

    @Test
    void nullKeyRecordsFlowWhileAKeyIsHeldAndTheKeyWaits() throws Exception {
        String topic = "key-nulls";
        String group = "g-key-nulls";
        clients.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "key",
                "share.record.lock.duration.ms", "20000");
        try (KafkaProducer<String, String> producer = clients.producer()) {
            send(producer, topic, "x", "x-0");
            send(producer, topic, "x", "x-1");
            send(producer, topic, null, "n-0");
        }
        try (KafkaShareConsumer<String, String> a = clients.consumer(group, "explicit");
                KafkaShareConsumer<String, String> b = clients.consumer(group, "explicit")) {
            // A takes x-0 (and n-0 if it comes along, which it accepts), and holds x-0
            a.subscribe(Set.of(topic));
            List<ConsumerRecord<String, String>> heldByA = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 20_000;
            for (int i = 0; i < 200 && heldByA.isEmpty() && System.currentTimeMillis() < deadline; i++) {
                var polled = a.poll(Duration.ofMillis(200));
                for (var r : polled) {
                    if ("x".equals(r.key())) {
                        heldByA.add(r);
                    } else {
                        a.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                if (!polled.isEmpty()) {
                    var unused = a.commitSync(); // what A accepted; what it holds waits
                }
            }
            assertThat(ShareClients.values(heldByA)).containsExactly("x-0");

            // While A holds x-0, null-key records produced now reach B, x-1 and x-2 do not
            try (KafkaProducer<String, String> producer = clients.producer()) {
                send(producer, topic, null, "n-1");
                send(producer, topic, "x", "x-2");
                send(producer, topic, null, "n-2");
            }
            b.subscribe(Set.of(topic));
            List<String> seenByB = new ArrayList<>();
            ShareClients.pollUntil(b, Duration.ofSeconds(10), () -> seenByB.containsAll(List.of("n-1", "n-2")), r -> {
                seenByB.add(r.value());
                b.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            long until = System.currentTimeMillis() + 1000; // a little longer: x-1 must not turn up
            ShareClients.pollUntil(b, Duration.ofSeconds(3), () -> System.currentTimeMillis() >= until, r -> {
                seenByB.add(r.value());
                b.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            assertThat(seenByB).contains("n-1", "n-2").doesNotContain("x-0", "x-1", "x-2");

            // Once A accepts x-0, the key moves on, in order
            a.acknowledge(heldByA.get(0), AcknowledgeType.ACCEPT);
            assertThat(a.commitSync().values()).allSatisfy(e -> assertThat(e).isEmpty());
            List<String> xs = new ArrayList<>();
            ShareClients.pollUntil(b, Duration.ofSeconds(10), () -> xs.size() >= 2, r -> {
                xs.add(r.value());
                b.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            assertThat(xs).containsExactly("x-1", "x-2");
        }
    }

    @Test
    void aPoisonRecordBlocksItsKeyOnlyUntilItDiesWhileOtherKeysFlow() throws Exception {
        String topic = "key-poison";
        String group = "g-key-poison";
        clients.createTopicReadFromEarliest(topic, 1, group, "pier.share.ordering", "key",
                "share.delivery.count.limit", "3");
        try (KafkaProducer<String, String> producer = clients.producer()) {
            send(producer, topic, "p", "poison");
            send(producer, topic, "p", "p-after");
            for (int i = 0; i < 10; i++) {
                for (String k : List.of("a", "b", "c")) {
                    send(producer, topic, k, k + "-" + i);
                }
            }
        }
        // Every poll is one entry: the values it returned, in order. The poison is always released.
        List<List<String>> polls = new ArrayList<>();
        List<Short> poisonCounts = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.currentTimeMillis() + 30_000;
            int seen = 0;
            for (int i = 0; i < 1000 && seen < 31 && System.currentTimeMillis() < deadline; i++) {
                var polled = consumer.poll(Duration.ofMillis(200));
                if (polled.isEmpty()) {
                    continue;
                }
                List<String> values = new ArrayList<>();
                for (var r : polled) {
                    values.add(r.value());
                    if (r.value().equals("poison")) {
                        poisonCounts.add(r.deliveryCount().orElseThrow());
                        consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        seen++;
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                polls.add(values);
                assertThat(consumer.commitSync().values()).allSatisfy(e -> assertThat(e).isEmpty());
            }
        }
        System.out.println("KeyOrderedShareIT poison polls: " + polls);
        assertThat(poisonCounts).containsExactly((short) 1, (short) 2, (short) 3);
        List<String> flat = polls.stream().flatMap(List::stream).toList();
        assertThat(flat).containsOnlyOnce("p-after");
        int lastPoison = flat.lastIndexOf("poison");
        int pAfter = flat.indexOf("p-after");
        int pollOfLastPoison = pollIndexOf(polls, lastPoison);
        // p-after only after the poison's last verdict: in a later poll than its third delivery
        assertThat(pollIndexOf(polls, pAfter)).as("poll of p-after").isGreaterThan(pollOfLastPoison);
        // other keys flowed while the poison was in flight
        int othersWhilePoison = 0;
        for (int p = 0; p <= pollOfLastPoison; p++) {
            othersWhilePoison += (int) polls.get(p).stream().filter(v -> !v.startsWith("p")).count();
        }
        assertThat(othersWhilePoison).as("other keys delivered while the poison was in flight").isGreaterThan(0);
        for (String k : List.of("a", "b", "c")) {
            List<String> ofKey = flat.stream().filter(v -> v.startsWith(k + "-")).toList();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                expected.add(k + "-" + i);
            }
            assertThat(ofKey).as("key %s in order, once each", k).containsExactlyElementsOf(expected);
        }
        // one record of a key per poll: the next waits for the verdict on the one before
        for (List<String> poll : polls) {
            assertThat(poll.stream().map(v -> v.equals("poison") ? "p" : v.substring(0, 1)).toList())
                    .as("keys of one poll").doesNotHaveDuplicates();
        }
    }

    private static int pollIndexOf(List<List<String>> polls, int flatIndex) {
        int seen = 0;
        for (int p = 0; p < polls.size(); p++) {
            seen += polls.get(p).size();
            if (flatIndex < seen) {
                return p;
            }
        }
        return -1;
    }

    private static void send(KafkaProducer<String, String> producer, String topic, String key, String value)
            throws Exception {
        producer.send(new ProducerRecord<>(topic, 0, key, value)).get();
    }

    /**
     * Produces {@link #RECORDS} records with unique values: mostly key "k" + random below {@link
     * #KEYS}, one in twenty without a key, in batches of mixed keys; returns the end offset.
     */
    private long produceWorkload(String topic, Random random) throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = clients.producer("linger.ms", "5")) {
            for (int i = 0; i < RECORDS; i++) {
                String key = random.nextInt(20) == 0 ? null : "k" + random.nextInt(KEYS);
                sent.add(producer.send(new ProducerRecord<>(topic, 0, key, "v" + i)));
            }
            producer.flush();
        }
        long last = -1;
        for (Future<RecordMetadata> f : sent) {
            last = Math.max(last, f.get().offset());
        }
        return last + 1;
    }

    /** Produces the records of a run. */
    @FunctionalInterface
    private interface Production {
        void run() throws Exception;
    }

    /**
     * Starts {@link #CONSUMERS} consumers; once each has polled (empty) a few times, so that all
     * are fetching when the records appear, runs {@code produce}, which sets {@code end[0]}; runs
     * until the group's start offset reaches it or {@code max} passes; returns what they saw.
     */
    private KeyHoldLog runWorkload(String topic, String group, long seed, Production produce, long[] end,
            Duration max) throws Exception {
        KeyHoldLog log = new KeyHoldLog();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicInteger running = new AtomicInteger(1);
        List<Thread> threads = new ArrayList<>();
        long deadline = System.nanoTime() + max.toNanos();
        CountDownLatch warmedUp = new CountDownLatch(CONSUMERS);
        for (int c = 0; c < CONSUMERS; c++) {
            int id = c;
            Thread t = new Thread(() -> {
                try {
                    consume(id, topic, group, new Random(seed * 31 + id), log, running, warmedUp, deadline);
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "key-order-consumer-" + c);
            threads.add(t);
            t.start();
        }
        try {
            assertThat(warmedUp.await(20, TimeUnit.SECONDS)).as("every consumer polling").isTrue();
            produce.run();
            while (System.nanoTime() < deadline && errors.isEmpty() && startOffset(group, topic) < end[0]) {
                TimeUnit.MILLISECONDS.sleep(500);
            }
        } finally {
            running.set(0);
            for (Thread t : threads) {
                t.join(LOCK_MS + 10_000);
            }
        }
        assertThat(errors).isEmpty();
        return log;
    }

    private void consume(int id, String topic, String group, Random random, KeyHoldLog log, AtomicInteger running,
            CountDownLatch warmedUp, long deadline) {
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit",
                "max.poll.records", "25")) {
            consumer.subscribe(Set.of(topic));
            for (int polls = 0; polls < 20_000 && running.get() == 1 && System.nanoTime() < deadline; polls++) {
                var records = consumer.poll(Duration.ofMillis(100));
                long returned = System.nanoTime();
                if (polls == 3) {
                    warmedUp.countDown();
                }
                if (records.isEmpty()) {
                    continue;
                }
                sleepMs(random.nextInt(4)); // processing
                List<Hold> verdicts = new ArrayList<>();
                Hold late = null;
                boolean holdOne = random.nextInt(25) == 0;
                for (ConsumerRecord<String, String> r : records) {
                    Hold h = log.delivered(id, r, returned);
                    if (holdOne && late == null) {
                        late = h;
                        continue;
                    }
                    int dice = random.nextInt(100);
                    AcknowledgeType type = dice < 85 ? AcknowledgeType.ACCEPT
                            : dice < 95 ? AcknowledgeType.RELEASE : AcknowledgeType.REJECT;
                    KeyHoldLog.verdict(h, type);
                    consumer.acknowledge(r, type);
                    verdicts.add(h);
                }
                commit(consumer, verdicts);
                if (late != null) {
                    // keep it past its lock; the acknowledgement after that is refused (or moot)
                    sleepMs(LOCK_MS + 500);
                    late.heldPastLock = true;
                    for (ConsumerRecord<String, String> r : records) {
                        if (r.offset() == late.offset) {
                            KeyHoldLog.verdict(late, AcknowledgeType.ACCEPT);
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                        }
                    }
                    commit(consumer, List.of(late));
                }
            }
        }
    }

    private static void commit(KafkaShareConsumer<String, String> consumer, List<Hold> verdicts) {
        if (verdicts.isEmpty()) {
            return;
        }
        boolean ok;
        try {
            Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(10));
            ok = !result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty);
        } catch (KafkaException e) {
            ok = false;
        }
        KeyHoldLog.committed(verdicts, ok);
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private long startOffset(String group, String topic) throws Exception {
        try (Admin admin = clients.admin()) {
            Map<TopicPartition, SharePartitionOffsetInfo> info = admin.listShareGroupOffsets(
                    Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo p = info == null ? null : info.get(new TopicPartition(topic, 0));
            return p == null ? -1 : p.startOffset();
        }
    }
}
