package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Share state survives broker restarts, seen through the stock {@code KafkaShareConsumer}: what
 * was accepted is never delivered again, what was not is; delivery counts never go down, so a
 * record at the delivery limit stays archived even when it was only held (not released) at the
 * restart; a {@code latest} group keeps its start offset.
 */
@Timeout(180)
class ShareRestartIT {
    private static final Duration POLL = Duration.ofMillis(200);
    private static final long WAIT_MS = 30_000;

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private ShareClients clients() {
        return new ShareClients(PIER.bootstrapServers());
    }

    /** One delivery as the consumer saw it. */
    private record Seen(String value, short count) {}

    /**
     * Polls until {@code done} holds for what was seen so far (or the wait ends), acknowledging
     * each record with what {@code ack} says (null: leave it held).
     */
    private static List<Seen> consume(KafkaShareConsumer<String, String> consumer, java.util.function.Function<
            ConsumerRecord<String, String>, AcknowledgeType> ack, Predicate<List<Seen>> done, long waitMs) {
        List<Seen> seen = new ArrayList<>();
        long deadline = System.currentTimeMillis() + waitMs;
        while (!done.test(seen) && System.currentTimeMillis() < deadline) {
            boolean acked = false;
            for (ConsumerRecord<String, String> r : consumer.poll(POLL)) {
                seen.add(new Seen(r.value(), r.deliveryCount().orElseThrow()));
                AcknowledgeType type = ack.apply(r);
                if (type != null) {
                    consumer.acknowledge(r, type);
                    acked = true;
                }
            }
            if (acked) {
                consumer.commitSync();
            }
        }
        return seen;
    }

    private static void closeQuietly(KafkaShareConsumer<String, String> consumer) {
        try {
            consumer.close(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            // its broker went away under it; nothing of its state matters to the test
        }
    }

    @Test
    void shouldNeverRedeliverAcceptedRecordsButRedeliverUnackedOnesWithHigherCounts() throws Exception {
        // Given 20 records, the even ones accepted and the odd ones still held when the broker restarts
        ShareClients c = clients();
        c.createTopic("restart-acks", 1);
        c.setGroupConfig("g-acks", "share.auto.offset.reset", "earliest");
        c.produce("restart-acks", 0, "v", 20);
        KafkaShareConsumer<String, String> first = c.consumer("g-acks", "explicit");
        first.subscribe(Set.of("restart-acks"));
        List<Seen> before = consume(first, r -> Integer.parseInt(r.value().substring(2)) % 2 == 0
                ? AcknowledgeType.ACCEPT : null, s -> s.size() >= 20, WAIT_MS);
        assertThat(before).hasSize(20).allSatisfy(s -> assertThat(s.count()).isEqualTo((short) 1));

        // When the broker restarts, and a new consumer of the group reads on
        PIER.restart();
        closeQuietly(first);
        List<Seen> after;
        try (KafkaShareConsumer<String, String> second = clients().consumer("g-acks", "explicit")) {
            second.subscribe(Set.of("restart-acks"));
            after = consume(second, r -> AcknowledgeType.ACCEPT,
                    s -> s.stream().map(Seen::value).distinct().count() >= 10, WAIT_MS);
            after.addAll(consume(second, r -> AcknowledgeType.ACCEPT, s -> false, 2_000));
        }

        // Then exactly the odd records come back, each with a delivery count above the one seen before
        Set<String> odd = new HashSet<>();
        for (int i = 1; i < 20; i += 2) {
            odd.add("v-" + i);
        }
        assertThat(after).extracting(Seen::value).containsExactlyInAnyOrderElementsOf(odd);
        assertThat(after).allSatisfy(s -> assertThat(s.count()).as(s.value()).isGreaterThanOrEqualTo((short) 2));
    }

    @Test
    void shouldReportAGroupsOffsetsFromStoredStateAfterARestart() throws Exception {
        // Given 10 records of which the first 4 were accepted and the others released
        ShareClients c = clients();
        c.createTopic("restart-offsets", 1);
        c.setGroupConfig("g-offsets", "share.auto.offset.reset", "earliest");
        c.produce("restart-offsets", 0, "o", 10);
        try (KafkaShareConsumer<String, String> consumer = c.consumer("g-offsets", "explicit")) {
            consumer.subscribe(Set.of("restart-offsets"));
            consume(consumer, r -> Integer.parseInt(r.value().substring(2)) < 4 ? AcknowledgeType.ACCEPT
                    : AcknowledgeType.RELEASE, s -> s.size() >= 10, WAIT_MS);
        }

        // When the broker restarts and nobody has fetched since
        PIER.restart();

        // Then the group's offsets come from the stored state: start offset 4, lag 6
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("restart-offsets", 0);
        try (org.apache.kafka.clients.admin.Admin admin = clients().admin()) {
            var info = admin.listShareGroupOffsets(Map.of("g-offsets",
                            new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo("g-offsets").get().get(tp);
            assertThat(info).isNotNull();
            assertThat(info.startOffset()).isEqualTo(4);
            assertThat(info.lag()).contains(6L);
        }
    }

    @Test
    void shouldKeepAGroupCreatedByAlteringItsOffsetsAcrossARestart() throws Exception {
        // Given a group that exists only because its offsets were altered
        ShareClients c = clients();
        c.createTopic("restart-altered", 1);
        c.produce("restart-altered", 0, "a", 10);
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition("restart-altered", 0);
        try (org.apache.kafka.clients.admin.Admin admin = c.admin()) {
            admin.alterShareGroupOffsets("g-altered", Map.of(tp, 7L)).all().get();
        }

        // When the broker restarts
        PIER.restart();

        // Then the group is still listed and its start offset is still 7
        try (org.apache.kafka.clients.admin.Admin admin = clients().admin()) {
            assertThat(admin.listGroups(org.apache.kafka.clients.admin.ListGroupsOptions.forShareGroups()).all().get())
                    .extracting(org.apache.kafka.clients.admin.GroupListing::groupId).contains("g-altered");
            var info = admin.listShareGroupOffsets(Map.of("g-altered",
                            new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo("g-altered").get().get(tp);
            assertThat(info).isNotNull();
            assertThat(info.startOffset()).isEqualTo(7);
        }
    }

    @Test
    void shouldKeepARecordArchivedOnceItsHeldDeliveriesReachTheLimitAcrossRestarts() throws Exception {
        // Given a group with delivery limit 2 and a record that is delivered and held, never acknowledged
        ShareClients c = clients();
        c.createTopic("restart-limit", 1);
        c.setGroupConfig("g-limit", "share.auto.offset.reset", "earliest");
        c.setGroupConfig("g-limit", "share.delivery.count.limit", "2");
        c.produce("restart-limit", 0, "poison", 1);
        List<Seen> deliveries = new ArrayList<>();

        // When the broker restarts while a consumer holds it, twice
        for (int round = 0; round < 2; round++) {
            KafkaShareConsumer<String, String> holder = clients().consumer("g-limit", "explicit");
            holder.subscribe(Set.of("restart-limit"));
            deliveries.addAll(consume(holder, r -> null, s -> !s.isEmpty(), round == 0 ? WAIT_MS : 10_000));
            PIER.restart();
            closeQuietly(holder);
        }

        // Then it is never delivered again, while a later record is
        clients().produce("restart-limit", 0, "marker", 1);
        List<Seen> last;
        try (KafkaShareConsumer<String, String> consumer = clients().consumer("g-limit", "explicit")) {
            consumer.subscribe(Set.of("restart-limit"));
            last = consume(consumer, r -> AcknowledgeType.ACCEPT,
                    s -> s.stream().anyMatch(x -> x.value().startsWith("marker")), WAIT_MS);
        }
        assertThat(last).extracting(Seen::value).containsExactly("marker-0");
        assertThat(deliveries).isNotEmpty().allSatisfy(s -> assertThat((int) s.count()).isLessThanOrEqualTo(2));
        for (int i = 1; i < deliveries.size(); i++) {
            assertThat(deliveries.get(i).count()).as("delivery counts only grow").isGreaterThan(
                    deliveries.get(i - 1).count());
        }
    }

    @Test
    void shouldKeepALatestGroupsStartOffsetAcrossARestart() throws Exception {
        // Given a group that started at "latest" after 5 old records and accepted the 10 that followed
        ShareClients c = clients();
        c.createTopic("restart-latest", 1);
        c.produce("restart-latest", 0, "old", 5);
        Map<String, Integer> mid = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients().consumer("g-latest", "explicit")) {
            consumer.subscribe(Set.of("restart-latest"));
            // the share-partition is initialised by the first fetch; poll until records produced after it arrive
            long deadline = System.currentTimeMillis() + WAIT_MS;
            int batch = 0;
            while (mid.size() < 10 && System.currentTimeMillis() < deadline) {
                if (mid.isEmpty()) {
                    clients().produce("restart-latest", 0, "mid" + batch++, 10);
                }
                for (Seen s : consume(consumer, r -> AcknowledgeType.ACCEPT, x -> x.size() >= 10, 3_000)) {
                    mid.merge(s.value(), 1, Integer::sum);
                }
            }
        }
        assertThat(mid).hasSizeGreaterThanOrEqualTo(10).allSatisfy((k, v) -> assertThat(v).isEqualTo(1));
        assertThat(mid.keySet()).noneMatch(v -> v.startsWith("old"));

        // When a backlog is produced while no consumer runs, and the broker restarts
        clients().produce("restart-latest", 0, "backlog", 10);
        PIER.restart();

        // Then the group reads exactly the backlog: nothing skipped, nothing accepted comes back
        List<Seen> after;
        try (KafkaShareConsumer<String, String> consumer = clients().consumer("g-latest", "explicit")) {
            consumer.subscribe(Set.of("restart-latest"));
            after = consume(consumer, r -> AcknowledgeType.ACCEPT, s -> s.size() >= 10, WAIT_MS);
            after.addAll(consume(consumer, r -> AcknowledgeType.ACCEPT, s -> false, 2_000));
        }
        assertThat(after).extracting(Seen::value).containsExactly("backlog-0", "backlog-1", "backlog-2", "backlog-3",
                "backlog-4", "backlog-5", "backlog-6", "backlog-7", "backlog-8", "backlog-9");
    }
}
