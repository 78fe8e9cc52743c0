package io.pier.service;

import io.pier.log.PartitionLog;
import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.LogSnapshot;
import io.pier.metrics.PierMetrics;
import io.pier.metrics.ShardShareMetrics;
import io.pier.metrics.SharePartitionSnapshot;
import io.pier.share.RecordState;
import io.pier.share.SharePartition;
import java.util.ArrayList;
import java.util.List;

/**
 * On each shard, every {@code pier.metrics.snapshot.interval.ms}, takes an immutable snapshot of
 * the logs and share-partitions the shard owns and of the groups it coordinates, and publishes it
 * for the gauges, so the scrape
 * thread never reads engine state. Just before publishing, it flushes the counters of the
 * share-partitions the shard owns: a scrape that sees a snapshot also sees the counts of every
 * change the snapshot reflects.
 */
final class MetricsSnapshotStep {
    private MetricsSnapshotStep() {}

    /** The step that publishes {@code shard}'s snapshot every {@code intervalMs}, the first at once. */
    static DutyStep step(Shard shard, PartitionRegistry partitions, SharePartitions shares, GroupSnapshots groups,
            PierMetrics metrics, long intervalMs) {
        return DutyStep.every(intervalMs, "metrics snapshot", true,
                nowMs -> publish(shard, partitions, shares, groups, metrics, nowMs));
    }

    private static void publish(Shard shard, PartitionRegistry partitions, SharePartitions shares,
            GroupSnapshots groups, PierMetrics metrics, long nowMs) {
        List<LogSnapshot> logs = new ArrayList<>();
        partitions.forEachOwned(shard, p -> {
            PartitionLog log = p.log();
            logs.add(new LogSnapshot(p.topicPartition().topic(), p.topicPartition().partition(),
                    log.logStartOffset(), log.logEndOffset(), log.highWatermark(), log.sizeInBytes()));
        });
        GroupSnapshot groupSnapshot = groups.take(shard);
        // Right before the snapshots are published (nothing changes on this shard meanwhile): the
        // collectors of one scrape run in no set order, and this keeps the window short in which a
        // scrape could read the counters before the flush and the gauges after the publish. Before
        // the share-partitions' snapshots, which carry the counts it flushed.
        ShardShareMetrics counters = metrics.shares(shard.id());
        counters.flush();
        List<SharePartitionSnapshot> shareSnapshots = new ArrayList<>();
        shares.forEachLoaded(shard, (p, sp) -> {
            if (!p.isDeleted()) {
                shareSnapshots.add(snapshot(p, sp, nowMs, counters));
            }
        });
        metrics.publish(shard.id(), shareSnapshots, logs);
        metrics.publishGroups(shard.id(), groupSnapshot);
    }

    private static SharePartitionSnapshot snapshot(Partition p, SharePartition sp, long nowMs,
            ShardShareMetrics counters) {
        String topic = p.topicPartition().topic();
        int partition = p.topicPartition().partition();
        long lag = ShareOffsets.OffsetSummary.of(sp, p.log().highWatermark()).lag();
        return new SharePartitionSnapshot(sp.key().groupId(), topic, partition, sp.startOffset(), sp.endOffset(), lag,
                sp.recordCount(RecordState.AVAILABLE), sp.recordCount(RecordState.ACQUIRED),
                sp.recordCount(RecordState.ACKNOWLEDGED), sp.recordCount(RecordState.ARCHIVED),
                sp.recordCount(RecordState.ARCHIVING), sp.recordsInBackoff(), sp.blockedKeys(), sp.oldestBlockedAgeMs(nowMs),
                sp.oldestUnsettledAgeMs(nowMs), sp.acquiredByMember(),
                counters.counts(sp.key().groupId(), topic, partition));
    }
}
