package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicProtocol;
import io.pier.group.HeartbeatRequest;
import io.pier.group.consumer.ConsumerHeartbeat;
import io.pier.metrics.PierMetrics;
import io.pier.runtime.ManualAgents;
import io.pier.share.AckBatch;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics step of a hand-driven broker: share-partition counts become visible when the shard
 * that owns the share-partition publishes its snapshot, together with the gauges that reflect them,
 * and a deleted share-partition's counts go with its series; groups, their rebalances and committed
 * offsets show what the coordinators and the offset store held at the last snapshot.
 */
class MetricsSnapshotStepTest {
    private static final long SNAPSHOT_MS = 1_000;
    private static final String SP = "group=\"g\",partition=\"0\",topic=\"t\"";

    @TempDir
    Path dir;

    private final PierMetrics metrics = new PierMetrics(2);
    private HandDrivenServices broker;
    private ManualAgents agents;
    private BrokerServices services;

    @BeforeEach
    void openBroker() throws Exception {
        broker = new HandDrivenServices(dir, 2, metrics);
        agents = broker.agents;
        services = broker.services;
    }

    @AfterEach
    void closeBroker() {
        broker.close();
    }

    private String exposition() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldShowTheCountsOfEveryChangeTheSnapshotReflectsAndDropThemWithADeletedState() throws Exception {
        TopicMetadata topic = agents.await(services.topics().create("t", 1, Map.of(), false));
        TopicPartition tp = new TopicPartition("t", 0);
        for (int i = 0; i < 3; i++) {
            assertThat(agents.await(services.logs().append(tp, MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(broker.clock.wallMs(), null, ("v" + i).getBytes())))).error())
                    .isEqualTo(Errors.NONE);
        }
        assertThat(agents.await(services.shareGroups().alterConfig("g",
                Map.of("share.auto.offset.reset", "earliest"), false)).error()).isEqualTo(Errors.NONE);
        assertThat(agents.await(services.shareGroups().heartbeat(new HeartbeatRequest("g", "m",
                HeartbeatRequest.JOIN_EPOCH, null, List.of("t"), "test", "/127.0.0.1"))).error())
                .isEqualTo(Errors.NONE);
        SharePartitionKey key = new SharePartitionKey("g", topic.id(), 0);
        assertThat(agents.await(services.shares().acquire(tp, key, "m",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null)).recordCount())
                .isEqualTo(3);
        assertThat(agents.await(services.shares().acknowledge(tp, key, "m",
                List.of(AckBatch.of(0, 2, AcknowledgeType.ACCEPT))))).isEqualTo(Errors.NONE);

        // Counted on the shard, not shown yet: the next snapshot shows them with the gauges.
        String before = exposition();
        assertThat(before).contains("pier_share_accepts_total{" + SP + "} 0.0\n")
                .doesNotContain("pier_share_start_offset{" + SP);

        agents.advance(SNAPSHOT_MS);

        assertThat(exposition()).contains(
                "pier_share_start_offset{" + SP + "} 3.0\n",
                "pier_share_deliveries_total{" + SP + "} 3.0\n",
                "pier_share_accepts_total{" + SP + "} 3.0\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"1.0\"} 3\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"accept\"} 3\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"accept\"} 3.0\n");

        // One more delivered, pending on the shard when the state is deleted: dropped with its series,
        // and no later step brings the series back.
        produceOne(broker, tp);
        assertThat(agents.await(services.shares().acquire(tp, key, "m",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null)).recordCount())
                .isEqualTo(1);
        agents.await(services.shareOffsets().deleteState(key));
        agents.advance(SNAPSHOT_MS);
        agents.advance(SNAPSHOT_MS);

        assertThat(exposition()).doesNotContain("group=\"g\"");
    }

    @Test
    void shouldShowGroupsByTypeAndStateTheirRebalancesAndTheCommittedOffsetsWithTheirLag() throws Exception {
        ConsumerGroups groups = services.consumerGroups();
        agents.await(services.topics().create("t", 2, Map.of(), false));
        TopicPartition p0 = new TopicPartition("t", 0);
        TopicPartition p1 = new TopicPartition("t", 1);
        for (int i = 0; i < 5; i++) {
            produceOne(broker, p0);
        }
        produceOne(broker, p1);
        produceOne(broker, p1);

        // A classic member in generation 1 that has not synced yet, a group that only commits
        // (on p1 beyond the end: no negative lag), a consumer-protocol member and a share-group member
        ClassicJoinResult id = agents.await(groups.join(classicJoin("")));
        CompletableFuture<ClassicJoinResult> joined = groups.join(classicJoin(id.memberId()));
        agents.runUntilIdle();
        agents.advance(3_000); // Kafka's initial rebalance delay
        assertThat(agents.await(joined).generationId()).isEqualTo(1);
        assertThat(agents.await(groups.commit(new ConsumerGroups.CommitRequest("committer", -1, "", null,
                (short) 9, Map.of(p0, new ConsumerGroups.Offset(2, -1, null),
                        p1, new ConsumerGroups.Offset(7, -1, null)))))).containsOnlyKeys(p0, p1)
                .containsValues(Errors.NONE);
        assertThat(agents.await(groups.consumerHeartbeat(new ConsumerHeartbeat("consumer", "m", 0, null, null,
                30_000, List.of("t"), null, null, Set.of(), "client", "/127.0.0.1"))).memberEpoch())
                .isEqualTo(1);
        assertThat(agents.await(services.shareGroups().heartbeat(new HeartbeatRequest("share", "m",
                HeartbeatRequest.JOIN_EPOCH, null, List.of("t"), "test", "/127.0.0.1"))).error())
                .isEqualTo(Errors.NONE);

        // Not shown before the next snapshot
        assertThat(exposition()).contains("pier_groups{state=\"Stable\",type=\"consumer\"} 0.0\n",
                "pier_group_rebalances_total{type=\"consumer\"} 0.0\n")
                .doesNotContain("pier_consumer_group_committed_offset{");

        agents.advance(SNAPSHOT_MS);

        assertThat(exposition()).contains(
                "pier_groups{state=\"CompletingRebalance\",type=\"classic\"} 1.0\n",
                "pier_groups{state=\"Empty\",type=\"classic\"} 1.0\n",
                "pier_groups{state=\"Stable\",type=\"classic\"} 0.0\n",
                "pier_groups{state=\"Stable\",type=\"consumer\"} 1.0\n",
                "pier_groups{state=\"Empty\",type=\"consumer\"} 0.0\n",
                "pier_groups{state=\"Stable\",type=\"share\"} 1.0\n",
                "pier_group_rebalances_total{type=\"classic\"} 1.0\n",
                "pier_group_rebalances_total{type=\"consumer\"} 1.0\n",
                "pier_consumer_group_committed_offset{group=\"committer\",partition=\"0\",topic=\"t\"} 2.0\n",
                "pier_consumer_group_committed_offset{group=\"committer\",partition=\"1\",topic=\"t\"} 7.0\n",
                "pier_consumer_group_lag{group=\"committer\",partition=\"0\",topic=\"t\"} 3.0\n",
                "pier_consumer_group_lag{group=\"committer\",partition=\"1\",topic=\"t\"} 0.0\n");

        // The consumer-protocol member leaves: its group is Empty after one more epoch bump
        assertThat(agents.await(groups.consumerHeartbeat(new ConsumerHeartbeat("consumer", "m",
                ConsumerHeartbeat.LEAVE_EPOCH, null, null, -1, null, null, null, null, "client", "/127.0.0.1")))
                .error()).isEqualTo(Errors.NONE);
        agents.advance(SNAPSHOT_MS);
        assertThat(exposition()).contains("pier_groups{state=\"Empty\",type=\"consumer\"} 1.0\n",
                "pier_groups{state=\"Stable\",type=\"consumer\"} 0.0\n",
                "pier_group_rebalances_total{type=\"consumer\"} 2.0\n");
    }

    private static ClassicJoin classicJoin(String memberId) {
        return new ClassicJoin("classic", memberId, null, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                List.of(new ClassicProtocol("range", new byte[] {1})), true, true);
    }

    private static void produceOne(HandDrivenServices broker, TopicPartition tp) throws Exception {
        assertThat(broker.agents.await(broker.services.logs().append(tp, MemoryRecords.withRecords(
                Compression.NONE, new SimpleRecord(broker.clock.wallMs(), null, "late".getBytes())))).error())
                .isEqualTo(Errors.NONE);
    }
}
