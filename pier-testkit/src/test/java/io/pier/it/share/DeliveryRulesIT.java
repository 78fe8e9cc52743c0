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
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What becomes of a record after REJECT, repeated RELEASE and implicit acknowledgement. */
@Timeout(90)
class DeliveryRulesIT {
    private static final int LOCK_MS = 2000;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.min.record.lock.duration.ms", "1000",
            "group.share.record.lock.duration.ms", String.valueOf(LOCK_MS));

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void rejectedRecordIsNeverRedeliveredWhileOthersFlow() throws Exception {
        clients.createTopicReadFromEarliest("reject", 1, "g-reject",
                "share.record.lock.duration.ms", String.valueOf(LOCK_MS));
        clients.produceEach("reject", 0, "first", 3);
        Map<String, List<Short>> deliveries = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-reject", "explicit")) {
            consumer.subscribe(Set.of("reject"));
            // first-0 is rejected, first-1 released once then accepted, first-2 accepted.
            pollUntil(consumer, Duration.ofSeconds(20),
                    () -> deliveries.getOrDefault("first-1", List.of()).size() >= 2
                            && deliveries.containsKey("first-0") && deliveries.containsKey("first-2"),
                    r -> {
                        List<Short> seen = deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>());
                        seen.add(r.deliveryCount().orElseThrow());
                        AcknowledgeType type = switch (r.value()) {
                            case "first-0" -> AcknowledgeType.REJECT;
                            case "first-1" -> seen.size() == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
                            default -> AcknowledgeType.ACCEPT;
                        };
                        consumer.acknowledge(r, type);
                    });
            assertThat(deliveries.get("first-1")).containsExactly((short) 1, (short) 2);

            // Later records keep flowing; keep polling past a lock duration so a wrongly
            // re-available first-0 would have had every chance to come back.
            clients.produceEach("reject", 0, "later", 5);
            long until = System.currentTimeMillis() + LOCK_MS + 1000;
            pollUntil(consumer, Duration.ofSeconds(20),
                    () -> System.currentTimeMillis() >= until && laterSeen(deliveries) == 5,
                    r -> {
                        deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>())
                                .add(r.deliveryCount().orElseThrow());
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    });
        }
        assertThat(laterSeen(deliveries)).isEqualTo(5);
        assertThat(deliveries.get("first-0")).containsExactly((short) 1);
        assertThat(deliveries.get("first-2")).containsExactly((short) 1);
        assertThat(deliveries.get("first-1")).containsExactly((short) 1, (short) 2);
    }

    private static long laterSeen(Map<String, List<Short>> deliveries) {
        return deliveries.keySet().stream().filter(v -> v.startsWith("later-")).count();
    }

    @Test
    void alwaysReleasedRecordIsDeliveredExactlyDeliveryLimitTimes() throws Exception {
        clients.createTopicReadFromEarliest("limit", 1, "g-limit",
                "share.delivery.count.limit", "3");
        clients.produceEach("limit", 0, "poison", 1);
        clients.produceEach("limit", 0, "fine", 3);
        List<Short> poisonCounts = new ArrayList<>();
        Map<String, Integer> others = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-limit", "explicit")) {
            consumer.subscribe(Set.of("limit"));
            Consumer<ConsumerRecord<String, String>> releasePoisonAcceptOthers = r -> {
                if (r.value().equals("poison-0")) {
                    poisonCounts.add(r.deliveryCount().orElseThrow());
                    consumer.acknowledge(r, AcknowledgeType.RELEASE);
                } else {
                    others.merge(r.value(), 1, Integer::sum);
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
            };
            pollUntil(consumer, Duration.ofSeconds(20), () -> poisonCounts.size() >= 3 && others.size() >= 3,
                    releasePoisonAcceptOthers);
            assertThat(poisonCounts).containsExactly((short) 1, (short) 2, (short) 3);

            // The poison record is archived now: records produced afterwards flow, it never returns.
            clients.produceEach("limit", 0, "after", 5);
            long until = System.currentTimeMillis() + LOCK_MS + 1000;
            pollUntil(consumer, Duration.ofSeconds(20),
                    () -> System.currentTimeMillis() >= until && others.size() >= 8, releasePoisonAcceptOthers);
        }
        assertThat(poisonCounts).containsExactly((short) 1, (short) 2, (short) 3);
        assertThat(others).hasSize(8).allSatisfy((k, v) -> assertThat(v).isEqualTo(1));
    }

    @Test
    void implicitModeAcceptsThePreviousPollsRecordsAtTheNextPoll() throws Exception {
        clients.createTopicReadFromEarliest("implicit", 1, "g-implicit",
                "share.record.lock.duration.ms", String.valueOf(LOCK_MS));
        clients.produceEach("implicit", 0, "v", 20);
        Set<Long> firstPoll = new HashSet<>();
        Set<Long> secondPoll = new HashSet<>();
        Map<Long, Short> seenByB = new HashMap<>();
        try (KafkaShareConsumer<String, String> a = clients.consumer("g-implicit", "implicit", "max.poll.records", "5");
                KafkaShareConsumer<String, String> b = clients.consumer("g-implicit", "explicit")) {
            a.subscribe(Set.of("implicit"));
            long deadline = System.currentTimeMillis() + 20_000;
            for (int i = 0; i < 200 && firstPoll.isEmpty() && System.currentTimeMillis() < deadline; i++) {
                a.poll(Duration.ofMillis(200)).forEach(r -> firstPoll.add(r.offset()));
            }
            // The next poll implicitly accepts the first poll's records and takes the next ones,
            // which A then holds without a verdict.
            for (int i = 0; i < 200 && secondPoll.isEmpty() && System.currentTimeMillis() < deadline; i++) {
                a.poll(Duration.ofMillis(200)).forEach(r -> secondPoll.add(r.offset()));
            }
            assertThat(firstPoll).isNotEmpty().hasSizeLessThanOrEqualTo(5);
            assertThat(secondPoll).isNotEmpty().doesNotContainAnyElementsOf(firstPoll);

            // B sees everything else, A's held records only after their lock expired, and never
            // the records A accepted implicitly.
            b.subscribe(Set.of("implicit"));
            pollUntil(b, Duration.ofSeconds(20), () -> seenByB.size() >= 20 - firstPoll.size(), r -> {
                seenByB.put(r.offset(), r.deliveryCount().orElseThrow());
                b.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            // Keep polling a little longer: nothing of the first poll may turn up late.
            long until = System.currentTimeMillis() + 1000;
            pollUntil(b, Duration.ofSeconds(5), () -> System.currentTimeMillis() >= until, r -> {
                seenByB.put(r.offset(), r.deliveryCount().orElseThrow());
                b.acknowledge(r, AcknowledgeType.ACCEPT);
            });
        }
        assertThat(seenByB).hasSize(20 - firstPoll.size());
        assertThat(seenByB.keySet()).doesNotContainAnyElementsOf(firstPoll);
        for (long o : secondPoll) {
            assertThat(seenByB.get(o)).as("delivery count of offset %d held by A", o).isEqualTo((short) 2);
        }
    }
}
