package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.ChildBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario S21 for share groups: a broker in a child process is SIGKILLed over and over while a
 * producer writes and a share consumer accepts (and sometimes releases) records; it is restarted
 * on the same data folder each time. Throughout: an offset whose ACCEPT was confirmed is never
 * delivered again (I5), the delivery count seen for an offset only grows (I7) and never exceeds
 * the limit (I6); at the end every acknowledged produce was delivered (I1).
 *
 * <p>{@code -Dpier.sharekill.cycles=N} (the {@code soak} profile sets 300) and
 * {@code -Dpier.sharekill.seed=N} control the run; the seed is printed.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ShareKillNineIT {
    private static final String TOPIC = "share-kill";
    private static final String GROUP = "share-kill-group";
    private static final int LIMIT = 10;

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    private final Map<Long, Short> maxCount = new ConcurrentHashMap<>();
    private final Set<Long> accepted = ConcurrentHashMap.newKeySet();
    private final Set<Long> delivered = ConcurrentHashMap.newKeySet();
    private final Set<Long> produced = ConcurrentHashMap.newKeySet();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicLong deliveries = new AtomicLong();
    private volatile boolean running = true;
    private volatile boolean producing = true;
    private ChildBroker broker;

    @Test
    void shouldKeepAcceptedFinalAndCountsGrowingAcrossKillNine() throws Exception {
        int cycles = Integer.getInteger("pier.sharekill.cycles", 8);
        long seed = Long.getLong("pier.sharekill.seed", System.nanoTime());
        System.out.printf("ShareKillNineIT seed %d, %d cycles%n", seed, cycles);
        Random random = new Random(seed);
        // small state segments, so kills also land on state-log rolls and cleanups
        broker = new ChildBroker(dataDir, scratch, "pier.share.state.segment.bytes=65536",
                "share.coordinator.cold.partition.snapshot.interval.ms=500",
                "share.coordinator.snapshot.update.records.per.snapshot=50");
        String bootstrap = broker.bootstrapServers();
        Thread producerThread = null;
        Thread consumerThread = null;
        try {
            broker.start(0);
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
                ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, GROUP);
                admin.incrementalAlterConfigs(Map.of(group, List.of(
                        new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("share.delivery.count.limit", String.valueOf(LIMIT)),
                                AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", "15000"),
                                AlterConfigOp.OpType.SET)))).all().get();
            }
            producerThread = new Thread(() -> produceLoop(bootstrap), "share-kill-producer");
            consumerThread = new Thread(() -> consumeLoop(bootstrap, seed), "share-kill-consumer");
            producerThread.start();
            consumerThread.start();

            for (int cycle = 1; cycle <= cycles; cycle++) {
                long target = accepted.size() + 20 + random.nextInt(200);
                await("progress before kill " + cycle).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                        .until(() -> {
                            broker.assertAlive();
                            return accepted.size() >= target;
                        });
                assertThat(broker.kill()).isTrue();
                broker.start(cycle);
                assertThat(violations).as("violations after cycle %d", cycle).isEmpty();
            }
            producing = false; // the consumer drains what is left
            producerThread.join(30_000);
            await("every produced record delivered").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> delivered.containsAll(produced));
        } finally {
            producing = false;
            running = false;
            if (producerThread != null) {
                producerThread.join(30_000);
            }
            if (consumerThread != null) {
                consumerThread.join(30_000);
            }
            broker.close();
        }
        System.out.printf("ShareKillNineIT: %d cycles, %d produced, %d deliveries, %d accepted%n", cycles,
                produced.size(), deliveries.get(), accepted.size());
        assertThat(violations).isEmpty();
        // Set arithmetic, not AssertJ's containsAll, which compares element by element (quadratic).
        Set<Long> neverDelivered = new java.util.HashSet<>(produced);
        neverDelivered.removeAll(delivered);
        assertThat(neverDelivered).as("produced records never delivered").isEmpty();
    }

    private void produceLoop(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "60000");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (long seq = 0; producing && seq < 5_000_000; seq++) {
                try {
                    var unused = producer.send(new ProducerRecord<>(TOPIC, 0, null, "v" + seq), (md, e) -> { // the callback sees failures
                        if (e == null) {
                            produced.add(md.offset());
                        }
                    });
                } catch (KafkaException e) {
                    // the broker is down; the callback reports the rest
                }
                if (seq % 200 == 0) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    private void consumeLoop(String bootstrap, long seed) {
        Random random = new Random(seed + 1);
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", GROUP);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(Set.of(TOPIC));
            while (running) {
                Map<Long, AcknowledgeType> sent = new java.util.HashMap<>();
                try {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        check(r);
                        AcknowledgeType type = random.nextInt(20) == 0 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                        consumer.acknowledge(r, type);
                        sent.put(r.offset(), type);
                    }
                    if (sent.isEmpty()) {
                        continue;
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(5));
                    boolean ok = !result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty);
                    if (ok) {
                        sent.forEach((offset, type) -> {
                            if (type == AcknowledgeType.ACCEPT) {
                                accepted.add(offset);
                            }
                        });
                    }
                } catch (KafkaException | IllegalStateException e) {
                    // the broker went away mid-request: these acks are indeterminate
                }
            }
        }
    }

    private void check(ConsumerRecord<String, String> r) {
        long offset = r.offset();
        short count = r.deliveryCount().orElse((short) -1);
        deliveries.incrementAndGet();
        delivered.add(offset);
        if (accepted.contains(offset)) {
            violations.add("offset " + offset + " delivered (count " + count + ") after a confirmed ACCEPT");
        }
        if (count > LIMIT) {
            violations.add("offset " + offset + " delivered with count " + count + " above the limit " + LIMIT);
        }
        Short before = maxCount.put(offset, count);
        if (before != null && count <= before) {
            violations.add("offset " + offset + " delivered with count " + count + " after count " + before);
        }
    }
}
