package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario S21, scaled down: a broker in a child process is SIGKILLed while an idempotent
 * acks=all producer writes unique values, then restarted on the same data folder, a few times
 * over. The producer keeps running across the kills, so batches in flight at a kill are retried
 * against the restarted broker. Afterwards every acknowledged value must be at exactly its
 * acknowledged offset, no offset may be acknowledged twice, and the log must be dense with no
 * value stored twice.
 *
 * <p>The seed that decides when each kill happens is printed; {@code -Dpier.killnine.seed=N}
 * repeats a run's schedule.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class KillNineIT {
    private static final String TOPIC = "kill-nine";
    private static final int PARTITIONS = 3;
    private static final int KILLS = 5;
    private static final int MAX_IN_FLIGHT = 2_000;
    private static final int SEGMENT_BYTES = 64 * 1024;
    private static final long MAX_SENDS = 5_000_000;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration TEST_BUDGET = Duration.ofSeconds(120);

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    private final AckedRecords acked = new AckedRecords();
    private final Set<String> attempted = ConcurrentHashMap.newKeySet();
    private final AtomicInteger failed = new AtomicInteger();
    private volatile boolean sending = true;
    private ChildBroker broker;

    @Test
    void shouldKeepEveryAcknowledgedRecordAtItsOffsetAcrossKillNine() throws Exception {
        long seed = Long.getLong("pier.killnine.seed", System.nanoTime());
        System.out.printf("KillNineIT seed %d%n", seed);
        Random random = new Random(seed);
        // small segments, so kills also land around segment rolls
        broker = new ChildBroker(dataDir, scratch, "log.segment.bytes=" + SEGMENT_BYTES,
                "log.index.interval.bytes=1024");
        String bootstrap = broker.bootstrapServers();
        long deadlineNanos = System.nanoTime() + TEST_BUDGET.toNanos();
        Thread sender = null;
        KafkaProducer<String, String> producer = null;
        try {
            // Given a running broker with a 3-partition topic and a producer writing seq-0, seq-1, ...
            broker.start(0);
            try (Admin admin = Admin.create(AckedRecords.producerProps(bootstrap))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            producer = new KafkaProducer<>(producerProps(bootstrap));
            KafkaProducer<String, String> client = producer;
            sender = new Thread(() -> sendLoop(client, deadlineNanos), "kill-nine-producer");
            sender.start();

            // When the broker is killed with SIGKILL after a random number of acknowledgements, and restarted
            for (int cycle = 1; cycle <= KILLS; cycle++) {
                awaitAcks(acked.size() + 100 + random.nextInt(1_500));
                assertThat(broker.kill()).as("broker died").isTrue();
                System.out.printf("KillNineIT cycle %d: killed after %d acks (%d attempted, %d failed)%n", cycle,
                        acked.size(), attempted.size(), failed.get());
                broker.start(cycle);
            }
            awaitAcks(acked.size() + 100);
            sending = false;
            sender.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(sender.isAlive()).as("producer thread stopped").isFalse();
            producer.close(Duration.ofSeconds(30));
            producer = null;

            // Then every acknowledged record is where the broker said it is
            Map<Integer, List<ConsumerRecord<String, String>>> log =
                    AckedRecords.readAll(bootstrap, TOPIC, PARTITIONS, Duration.ofSeconds(30));
            int stored = log.values().stream().mapToInt(List::size).sum();
            System.out.printf("KillNineIT: %d kill cycles, %d attempted, %d acknowledged, %d failed, %d in the log%n",
                    KILLS, attempted.size(), acked.size(), failed.get(), stored);
            assertThat(acked.size()).isGreaterThan(KILLS * 100);
            AckedRecords.assertLogMatches(acked.all(), log);
            assertThat(stored).isGreaterThanOrEqualTo(acked.size()).isLessThanOrEqualTo(attempted.size());
            log.values().forEach(records -> records.forEach(r ->
                    assertThat(attempted).as("phantom value at offset %d", r.offset()).contains(r.value())));
        } finally {
            sending = false;
            if (sender != null) {
                sender.join(TimeUnit.SECONDS.toMillis(30));
            }
            if (producer != null) {
                producer.close(Duration.ZERO);
            }
            broker.close();
        }
    }

    /** Sends unique values round-robin over the partitions, at most {@value #MAX_IN_FLIGHT} unanswered. */
    private void sendLoop(KafkaProducer<String, String> producer, long deadlineNanos) {
        Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
        for (long seq = 0; sending && seq < MAX_SENDS && System.nanoTime() < deadlineNanos; ) {
            try {
                if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            String value = "seq-" + seq;
            int partition = (int) (seq % PARTITIONS);
            seq++;
            attempted.add(value);
            try {
                var unused = producer.send(new ProducerRecord<>(TOPIC, partition, null, value), (md, error) -> { // the callback sees failures
                    inFlight.release();
                    if (error == null) {
                        acked.add(value, md);
                    } else {
                        failed.incrementAndGet();
                    }
                });
            } catch (KafkaException e) {
                inFlight.release();
                failed.incrementAndGet();
            }
        }
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = AckedRecords.producerProps(bootstrap);
        p.put("linger.ms", "2");
        p.put("delivery.timeout.ms", "60000");
        p.put("request.timeout.ms", "10000");
        p.put("retry.backoff.ms", "50");
        p.put("reconnect.backoff.ms", "50");
        p.put("reconnect.backoff.max.ms", "250");
        p.put("max.block.ms", "30000");
        return p;
    }

    private void awaitAcks(int target) {
        await("acknowledgements up to " + target).atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    broker.assertAlive();
                    return acked.size() >= target;
                });
    }
}
