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

/** Heartbeats and the simple assignor as the stock share consumer sees them. */
@Timeout(120)
class ShareAssignmentIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.heartbeat.interval.ms", "300",
            "group.share.min.heartbeat.interval.ms", "100");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldSplitTwoPartitionsBetweenTwoConsumersAndLetANewMemberTakeOver() throws Exception {
        clients.createTopicReadFromEarliest("assign", 2, "g-assign");
        int perWave = 20;
        int produced = 0;
        try (ShareGroupRun run = new ShareGroupRun(clients, "g-assign", "assign", 3, Duration.ofSeconds(100));
                KafkaProducer<String, String> producer = clients.singleRecordBatchProducer()) {
            ShareGroupRun.Member first = run.start();
            ShareGroupRun.Member second = run.start();
            run.awaitPolling(3, Duration.ofSeconds(30));

            // Waves of records over both partitions until, in one wave, each consumer got records
            // from exactly one partition, a different one each: the group settled on one
            // partition per member.
            int settledWave = -1;
            for (int w = 0; w < 40 && settledWave < 0; w++) {
                clients.produceSpread(producer, "assign", 2, "a" + w, 0, perWave);
                produced += perWave;
                run.awaitAccepted(produced, Duration.ofSeconds(30));
                Set<Integer> p1 = partitionsOfWave(first, "a" + w + "-");
                Set<Integer> p2 = partitionsOfWave(second, "a" + w + "-");
                if (p1.size() == 1 && p2.size() == 1 && !p1.equals(p2)) {
                    settledWave = w;
                }
            }
            System.out.println("Two consumers settled on one partition each at wave " + settledWave);
            assertThat(settledWave).as("wave in which the two consumers read disjoint partitions")
                    .isNotNegative();

            // The first consumer leaves (close); a new one joins and gets records; nothing is lost.
            run.stop(first);
            ShareGroupRun.Member third = run.start();
            boolean thirdGotRecords = false;
            for (int w = 0; w < 40 && !thirdGotRecords; w++) {
                clients.produceSpread(producer, "assign", 2, "b" + w, 0, perWave);
                produced += perWave;
                run.awaitAccepted(produced, Duration.ofSeconds(30));
                thirdGotRecords = third.count() > 0;
            }
            assertThat(thirdGotRecords).as("the consumer that joined later received records").isTrue();
            run.close();
            assertThat(run.errors()).isEmpty();
            assertThat(second.count()).isPositive();
            assertThat(run.acceptCounts()).hasSize(produced)
                    .allSatisfy((value, times) -> assertThat(times).as(value).isEqualTo(1));
        }
    }

    private static Set<Integer> partitionsOfWave(ShareGroupRun.Member member, String prefix) {
        return member.accepted.stream().filter(r -> r.value().startsWith(prefix)).map(r -> r.partition())
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
