package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.HeartbeatRequest;
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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics step of a hand-driven broker: share-partition counts become visible when the shard
 * that owns the share-partition publishes its snapshot, together with the gauges that reflect them,
 * and a deleted share-partition's counts go with its series.
 */
class MetricsSnapshotStepTest {
    private static final long SNAPSHOT_MS = 1_000;
    private static final String SP = "group=\"g\",partition=\"0\",topic=\"t\"";

    @TempDir
    Path dir;

    private static String exposition(PierMetrics metrics) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldShowTheCountsOfEveryChangeTheSnapshotReflectsAndDropThemWithADeletedState() throws Exception {
        PierMetrics metrics = new PierMetrics(2);
        try (HandDrivenServices broker = new HandDrivenServices(dir, 2, metrics)) {
            ManualAgents agents = broker.agents;
            BrokerServices services = broker.services;
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
            String before = exposition(metrics);
            assertThat(before).contains("pier_share_accepts_total{" + SP + "} 0.0\n")
                    .doesNotContain("pier_share_start_offset{" + SP);

            agents.advance(SNAPSHOT_MS);

            assertThat(exposition(metrics)).contains(
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

            assertThat(exposition(metrics)).doesNotContain("group=\"g\"");
        }
    }

    private static void produceOne(HandDrivenServices broker, TopicPartition tp) throws Exception {
        assertThat(broker.agents.await(broker.services.logs().append(tp, MemoryRecords.withRecords(
                Compression.NONE, new SimpleRecord(broker.clock.wallMs(), null, "late".getBytes())))).error())
                .isEqualTo(Errors.NONE);
    }
}
