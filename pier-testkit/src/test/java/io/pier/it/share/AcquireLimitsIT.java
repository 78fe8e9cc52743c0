package io.pier.it.share;

import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** How much one fetch may acquire: acquire modes, max.poll.records, the in-flight cap. */
@Timeout(90)
class AcquireLimitsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.min.partition.max.record.locks", "100");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void recordLimitModeBoundsEachPollToMaxPollRecords() throws Exception {
        clients.createTopicReadFromEarliest("reclimit", 1, "g-reclimit");
        // One big log batch, so batch_optimized would hand out all 40 at once.
        clients.produceBatched("reclimit", 0, "v", 40);
        Map<String, Integer> seen = new HashMap<>();
        List<Integer> pollSizes = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-reclimit", "explicit",
                "share.acquire.mode", "record_limit", "max.poll.records", "5")) {
            consumer.subscribe(Set.of("reclimit"));
            long deadline = System.currentTimeMillis() + 30_000;
            for (int i = 0; i < 1000 && seen.size() < 40 && System.currentTimeMillis() < deadline; i++) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                pollSizes.add(records.count());
                for (ConsumerRecord<String, String> r : records) {
                    seen.merge(r.value(), 1, Integer::sum);
                    assertThat(r.deliveryCount()).hasValue((short) 1);
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync();
            }
        }
        assertThat(seen).hasSize(40).allSatisfy((k, v) -> assertThat(v).isEqualTo(1));
        assertThat(pollSizes).allSatisfy(n -> assertThat(n).isBetween(1, 5));
        assertThat(pollSizes.size()).isGreaterThanOrEqualTo(8);
    }

    @Test
    void batchOptimizedPollsReturnAscendingOffsetsPerPartition() throws Exception {
        clients.createTopicReadFromEarliest("ordered", 2, "g-ordered");
        for (int round = 0; round < 4; round++) {
            clients.produceBatched("ordered", 0, "p0r" + round, 15);
            clients.produceEach("ordered", 1, "p1r" + round, 5);
        }
        int total = 4 * (15 + 5);
        Set<String> accepted = new HashSet<>();
        Set<String> released = new HashSet<>();
        List<String> orderViolations = new ArrayList<>();
        int polls = 0;
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-ordered", "explicit",
                "max.poll.records", "25")) {
            consumer.subscribe(Set.of("ordered"));
            long deadline = System.currentTimeMillis() + 30_000;
            for (int i = 0; i < 1000 && accepted.size() < total && System.currentTimeMillis() < deadline; i++) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                polls++;
                Map<Integer, Long> lastOffset = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    Long previous = lastOffset.put(r.partition(), r.offset());
                    if (previous != null && previous >= r.offset()) {
                        orderViolations.add("partition " + r.partition() + ": " + previous + " then " + r.offset());
                    }
                    // Release every 7th record once, so later polls mix redeliveries and new records.
                    if (r.offset() % 7 == 3 && released.add(r.topic() + r.partition() + "@" + r.offset())) {
                        consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        accepted.add(r.value());
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                consumer.commitSync();
            }
        }
        assertThat(accepted).hasSize(total);
        assertThat(released).isNotEmpty();
        assertThat(polls).isGreaterThan(1);
        assertThat(orderViolations).isEmpty();
    }

    @Test
    void inFlightCapHoldsUntilRecordsAreAcknowledged() throws Exception {
        clients.createTopicReadFromEarliest("cap", 1, "g-cap",
                "share.partition.max.record.locks", "100",
                "share.record.lock.duration.ms", "30000");
        clients.produceEach("cap", 0, "v", 300);
        Map<Long, ConsumerRecord<String, String>> heldByA = new HashMap<>();
        Map<Long, ConsumerRecord<String, String>> heldByB = new HashMap<>();
        Set<Long> seenByC = new HashSet<>();
        try (KafkaShareConsumer<String, String> a = clients.consumer("g-cap", "explicit", "max.poll.records", "60");
                KafkaShareConsumer<String, String> b = clients.consumer("g-cap", "explicit", "max.poll.records", "500");
                KafkaShareConsumer<String, String> c = clients.consumer("g-cap", "explicit", "max.poll.records", "500")) {
            a.subscribe(Set.of("cap"));
            long deadline = System.currentTimeMillis() + 20_000;
            for (int i = 0; i < 200 && heldByA.isEmpty() && System.currentTimeMillis() < deadline; i++) {
                a.poll(Duration.ofMillis(200)).forEach(r -> heldByA.put(r.offset(), r));
            }
            assertThat(heldByA).hasSize(60);
            // B asks for 500 but only the rest of the 100-record window is left.
            b.subscribe(Set.of("cap"));
            for (int i = 0; i < 200 && heldByB.isEmpty() && System.currentTimeMillis() < deadline; i++) {
                b.poll(Duration.ofMillis(200)).forEach(r -> heldByB.put(r.offset(), r));
            }
            assertThat(heldByB).hasSize(40);
            assertThat(heldByB.keySet()).doesNotContainAnyElementsOf(heldByA.keySet());
            // Nobody acknowledges: C polls again and again and gets nothing.
            c.subscribe(Set.of("cap"));
            long quietUntil = System.currentTimeMillis() + 2000;
            for (int i = 0; i < 100 && System.currentTimeMillis() < quietUntil; i++) {
                c.poll(Duration.ofMillis(200)).forEach(r -> seenByC.add(r.offset()));
            }
            assertThat(seenByC).as("records past the 100-record window while it is full").isEmpty();

            // A accepts its 60: the window moves on and C gets records past the first 100.
            heldByA.values().forEach(r -> a.acknowledge(r, AcknowledgeType.ACCEPT));
            assertThat(a.commitSync()).allSatisfy((tp, error) -> assertThat(error).isEmpty());
            List<Long> gotByC = new ArrayList<>();
            pollUntil(c, Duration.ofSeconds(20), () -> !gotByC.isEmpty(), r -> {
                gotByC.add(r.offset());
                c.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            assertThat(gotByC).isNotEmpty().allSatisfy(o -> assertThat(o).isBetween(100L, 299L));
            // The window is [60, 159] at most while B still holds 60..99.
            assertThat(gotByC).allSatisfy(o -> assertThat(o).isLessThan(160L));
        }
    }
}
