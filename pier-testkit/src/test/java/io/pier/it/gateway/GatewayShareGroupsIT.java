package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.GroupType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.it.share.ShareClients;
import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * Share groups through a gateway (issue 16) on an upstream Kafka whose own share groups are off:
 * stock KafkaShareConsumers pointed at the gateway get queue semantics on the upstream's topics.
 * The records are produced through the gateway and live upstream; the gateway's share engine
 * reads them from its mirror of each upstream partition.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayShareGroupsIT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static Pier gateway;
    private static ShareClients clients;

    @BeforeAll
    static void startGateway() throws Exception {
        gateway = Pier.builder().config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                // small mirror segments, trimmed every second: shouldTrimAMirrorBelowItsShareGroupsStarts
                .config("log.segment.bytes", "65536").config("log.retention.check.interval.ms", "1000")
                .start();
        clients = new ShareClients(gateway.bootstrapServers());
    }

    @AfterAll
    static void stopGateway() {
        if (gateway != null) {
            gateway.close();
        }
    }

    @Test
    void shouldDeliverEveryUpstreamRecordOnceAcrossTwoShareConsumers() throws Exception {
        // Given 3 x 300 records on an upstream topic, and a group that reads from the earliest
        clients.createTopic("jobs", 3);
        clients.setGroupConfig("workers", "share.auto.offset.reset", "earliest");
        for (int p = 0; p < 3; p++) {
            clients.produce("jobs", p, "p" + p, 300);
        }

        // When two share consumers of the group accept what they get, through the gateway
        Map<String, Integer> accepted = new HashMap<>();
        try (KafkaShareConsumer<String, String> a = clients.consumer("workers", "explicit");
                KafkaShareConsumer<String, String> b = clients.consumer("workers", "explicit")) {
            a.subscribe(Set.of("jobs"));
            b.subscribe(Set.of("jobs"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (accepted.size() < 900 && System.nanoTime() < deadline) {
                for (KafkaShareConsumer<String, String> c : List.of(a, b)) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        accepted.merge(r.value(), 1, Integer::sum);
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    c.commitSync(Duration.ofSeconds(10));
                }
            }

            // Then every record was delivered and accepted exactly once
            assertThat(accepted).hasSize(900).allSatisfy((value, times) -> assertThat(times).isEqualTo(1));

            // And the group is the gateway's: described and listed with its two members
            try (Admin admin = clients.admin()) {
                ShareGroupDescription group = admin.describeShareGroups(List.of("workers")).all()
                        .get(30, TimeUnit.SECONDS).get("workers");
                assertThat(group.members()).hasSize(2);
                assertThat(admin.listGroups().all().get(30, TimeUnit.SECONDS))
                        .filteredOn(g -> g.groupId().equals("workers"))
                        .extracting(GroupListing::type).containsExactly(java.util.Optional.of(GroupType.SHARE));
            }
        }
    }

    @Test
    void shouldRedeliverAReleasedRecordWithItsDeliveryCount() throws Exception {
        clients.createTopic("retries", 1);
        clients.setGroupConfig("retrying", "share.auto.offset.reset", "earliest");
        clients.produce("retries", 0, "r", 1);
        List<Short> counts = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("retrying", "explicit")) {
            consumer.subscribe(Set.of("retries"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (counts.size() < 3 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    counts.add(r.deliveryCount().orElseThrow());
                    consumer.acknowledge(r, counts.size() < 3 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                }
                consumer.commitSync(Duration.ofSeconds(10));
            }
        }
        assertThat(counts).containsExactly((short) 1, (short) 2, (short) 3);
    }

    /** The group's start offset for {@code tp} as Admin reports it, or null while it has none. */
    @Test
    void shouldTrimAMirrorBelowItsShareGroupsStartsAndReachBackForANewGroup() throws Exception {
        // Given 5,000 records upstream, and a group that accepted them all through the gateway
        clients.createTopic("trimmed", 1);
        clients.setGroupConfig("trimmers", "share.auto.offset.reset", "earliest");
        clients.setGroupConfig("latecomers", "share.auto.offset.reset", "earliest");
        for (int i = 0; i < 5; i++) {
            clients.produce("trimmed", 0, "t" + i, 1_000);
        }
        try (KafkaShareConsumer<String, String> c = clients.consumer("trimmers", "explicit")) {
            c.subscribe(Set.of("trimmed"));
            assertThat(ShareClients.pollAndAck(c, 5_000, Duration.ofSeconds(60), AcknowledgeType.ACCEPT)).hasSize(5_000);
        }

        // Then the gateway's mirror of the partition loses its segments below the group's start
        // (the first of them began at offset 0)
        java.nio.file.Path mirror = gateway.dataDir().resolve("logs").resolve("trimmed-0");
        org.awaitility.Awaitility.await("mirror trimmed").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                        assertThat(lowestSegment(mirror)).as("lowest segment base offset").isGreaterThan(0L));

        // and a new group reading from the earliest still gets every record: the mirror reaches back
        try (KafkaShareConsumer<String, String> c = clients.consumer("latecomers", "explicit")) {
            c.subscribe(Set.of("trimmed"));
            assertThat(ShareClients.pollAndAck(c, 5_000, Duration.ofSeconds(60), AcknowledgeType.ACCEPT))
                    .extracting(ConsumerRecord::offset).doesNotHaveDuplicates().hasSize(5_000).contains(0L, 4_999L);
        }
    }

    /** The base offset of the oldest segment file in a partition's folder. */
    private static long lowestSegment(java.nio.file.Path dir) throws java.io.IOException {
        try (var files = java.nio.file.Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".log"))
                    .mapToLong(n -> Long.parseLong(n.substring(0, n.length() - 4))).min().orElse(-1);
        }
    }

    private static Long startOffset(String group, TopicPartition tp) throws Exception {
        try (Admin admin = clients.admin()) {
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                    Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                    .get(30, TimeUnit.SECONDS);
            SharePartitionOffsetInfo o = offsets.get(tp);
            return o == null ? null : o.startOffset();
        }
    }

    @Test
    void shouldStartALatestGroupAtTheUpstreamEndNotAtTheMirrorsStart() throws Exception {
        // Given records already on the upstream before the group exists (default: latest)
        clients.createTopic("late", 1);
        clients.produce("late", 0, "old", 50);

        // When the group starts, then new records are produced
        List<String> got = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("latecomers", "explicit")) {
            consumer.subscribe(Set.of("late"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            boolean produced = false;
            while (got.size() < 20 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    got.add(r.value());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync(Duration.ofSeconds(10));
                if (!produced && startOffset("latecomers", new TopicPartition("late", 0)) != null) {
                    // the share-partition exists (at its first fetch): what comes now is after its start
                    assertThat(startOffset("latecomers", new TopicPartition("late", 0))).isEqualTo(50L);
                    clients.produce("late", 0, "new", 20);
                    produced = true;
                }
            }
        }
        // Then it gets exactly the new ones
        assertThat(got).hasSize(20).allMatch(v -> v.startsWith("new-"));
    }
}
