package io.pier.server;

import io.pier.log.PartitionLog;
import io.pier.metrics.LogSnapshot;
import io.pier.metrics.PierMetrics;
import io.pier.metrics.SharePartitionSnapshot;
import io.pier.share.RecordState;
import io.pier.share.SharePartition;
import java.util.ArrayList;
import java.util.List;

/**
 * On each shard, every {@code pier.metrics.snapshot.interval.ms}, takes an immutable snapshot of
 * the logs and share-partitions the shard owns and publishes it for the gauges, so the scrape
 * thread never reads engine state.
 */
final class MetricsTicker {
    private MetricsTicker() {}

    static void install(Shard[] shards, PartitionRegistry partitions, ShareService shares, PierMetrics metrics,
            long intervalMs) {
        for (Shard shard : shards) {
            long[] nextMs = {Long.MIN_VALUE};
            shard.execute(() -> shard.addTicker(nowMs -> {
                if (nowMs < nextMs[0]) {
                    return;
                }
                nextMs[0] = nowMs + intervalMs;
                publish(shard, partitions, shares, metrics, nowMs);
            }));
        }
    }

    private static void publish(Shard shard, PartitionRegistry partitions, ShareService shares, PierMetrics metrics,
            long nowMs) {
        List<LogSnapshot> logs = new ArrayList<>();
        partitions.forEachOwned(shard, p -> {
            PartitionLog log = p.log();
            logs.add(new LogSnapshot(p.topicPartition().topic(), p.topicPartition().partition(),
                    log.logStartOffset(), log.logEndOffset(), log.highWatermark(), log.sizeInBytes()));
        });
        List<SharePartitionSnapshot> shareSnapshots = new ArrayList<>();
        shares.forEachLoaded(shard, (p, sp) -> {
            if (!p.isDeleted()) {
                shareSnapshots.add(snapshot(p, sp, nowMs));
            }
        });
        metrics.publish(shard.id(), shareSnapshots, logs);
    }

    private static SharePartitionSnapshot snapshot(Partition p, SharePartition sp, long nowMs) {
        long lag = ShareService.OffsetSummary.of(sp.startOffset(), p.log().highWatermark(),
                sp.deliveryCompleteCount()).lag();
        return new SharePartitionSnapshot(sp.key().groupId(), p.topicPartition().topic(),
                p.topicPartition().partition(), sp.startOffset(), sp.endOffset(), lag,
                sp.recordCount(RecordState.AVAILABLE), sp.recordCount(RecordState.ACQUIRED),
                sp.recordCount(RecordState.ACKNOWLEDGED), sp.recordCount(RecordState.ARCHIVED),
                sp.oldestUnsettledAgeMs(nowMs), sp.acquiredByMember());
    }
}
