package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Many share consumers in one group: the records are spread over all of them, each accepted once. */
@Timeout(180)
class ShareManyConsumersIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.heartbeat.interval.ms", "1000",
            "group.share.min.heartbeat.interval.ms", "100",
            "group.share.min.record.lock.duration.ms", "1000");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldSpreadRecordsOverHundredConsumersOnTenPartitions() throws Exception {
        clients.createTopicReadFromEarliest("many", 10, "g-many");
        // Records a consumer held while its assignment moved come back after the lock expires.
        clients.setGroupConfig("g-many", "share.record.lock.duration.ms", "10000");
        int consumers = 100;
        int waves = 10;
        int perWave = 300;
        try (ShareGroupRun run = new ShareGroupRun(clients, "g-many", "many", consumers, Duration.ofSeconds(150),
                        "max.poll.records", "5");
                KafkaProducer<String, String> producer = clients.singleRecordBatchProducer()) {
            for (int i = 0; i < consumers; i++) {
                run.start();
            }
            // Every consumer up and polling (so joined) before the first record; then waves, each
            // produced once the previous one is fully accepted.
            long t0 = System.nanoTime();
            run.awaitPolling(5, Duration.ofSeconds(40));
            long t1 = System.nanoTime();
            for (int w = 0; w < waves; w++) {
                long p0 = System.nanoTime();
                clients.produceSpread(producer, "many", 10, "m", w * perWave, perWave);
                long p1 = System.nanoTime();
                int expected = (w + 1) * perWave;
                run.awaitAccepted(expected, Duration.ofSeconds(30));
                System.out.printf("wave %d: produced in %d ms, accepted in %d ms%n", w, (p1 - p0) / 1_000_000,
                        (System.nanoTime() - p1) / 1_000_000);
            }
            long t2 = System.nanoTime();
            run.close();
            long t3 = System.nanoTime();
            System.out.printf("100 consumers: %d ms to start polling, %d ms for %d records, %d ms to close%n",
                    (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, waves * perWave, (t3 - t2) / 1_000_000);
            assertThat(run.errors()).isEmpty();
            assertThat(run.acceptCounts()).hasSize(waves * perWave)
                    .allSatisfy((value, times) -> assertThat(times).as(value).isEqualTo(1));
            Set<Integer> idle = run.members().stream().filter(m -> m.count() == 0).map(m -> m.index)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(idle).as("consumers that received nothing").isEmpty();
            System.out.println("100 consumers: records per consumer "
                    + run.members().stream().map(m -> m.count()).sorted().collect(Collectors.toList()));
        }
    }

    @Test
    void shouldAcceptEachOfThousandRecordsOnOnePartitionExactlyOnceAcrossEightConsumers() throws Exception {
        clients.createTopicReadFromEarliest("one-part", 1, "g-one-part");
        try (ShareGroupRun run = new ShareGroupRun(clients, "g-one-part", "one-part", 8, Duration.ofSeconds(60),
                        "max.poll.records", "10");
                KafkaProducer<String, String> producer = clients.singleRecordBatchProducer()) {
            for (int i = 0; i < 8; i++) {
                run.start();
            }
            for (int w = 0; w < 10; w++) {
                clients.produceSpread(producer, "one-part", 1, "o", w * 100, 100);
            }
            run.awaitAccepted(1000, Duration.ofSeconds(30));
            run.close();
            assertThat(run.errors()).isEmpty();
            assertThat(run.acceptCounts()).hasSize(1000)
                    .allSatisfy((value, times) -> assertThat(times).as(value).isEqualTo(1));
            assertThat(run.accepted()).isEqualTo(1000);
            long receivers = run.members().stream().filter(m -> m.count() > 0).count();
            System.out.println("8 consumers, one partition: records per consumer "
                    + run.members().stream().map(m -> m.count()).collect(Collectors.toList()));
            assertThat(receivers).as("consumers that received records").isGreaterThan(1);
        }
    }
}
