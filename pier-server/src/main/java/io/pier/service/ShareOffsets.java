package io.pier.service;

import io.pier.share.SharePartition;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import io.pier.state.ShareState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The share-group offset admin side: start offset and lag per share-partition (from the live
 * share-partition on its shard, or from stored state after a restart), and resetting or dropping
 * a share-partition's state for AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups.
 */
public final class ShareOffsets {
    private final SharePersister persister;
    private final PartitionRegistry partitions;
    private final SharePartitions live;
    private final ShareEventsFactory events;

    ShareOffsets(SharePersister persister, PartitionRegistry partitions, SharePartitions live,
            ShareEventsFactory events) {
        this.persister = persister;
        this.partitions = partitions;
        this.live = live;
        this.events = events;
    }

    /** A share-partition's start offset and lag as DescribeShareGroupOffsets reports them; -1 if unknown. */
    public record OffsetSummary(long startOffset, long lag) {
        public static final OffsetSummary NONE = new OffsetSummary(-1, -1);

        /** KIP-1226: lag = partition end offset - start offset - records delivered for good in flight. */
        static OffsetSummary of(long startOffset, long endOffset, long deliveryCompleteCount) {
            return new OffsetSummary(startOffset, Math.max(0, endOffset - startOffset - deliveryCompleteCount));
        }

        static OffsetSummary of(SharePartition sp, long endOffset) {
            return of(sp.startOffset(), endOffset, sp.deliveryCompleteCount());
        }
    }

    /** The share-partitions of a group that have state, by topic id then partition. */
    public List<SharePartitionKey> stateKeys(String groupId) {
        return live.stateKeys(groupId);
    }

    /**
     * Start offset and lag of one share-partition, read on the partition's shard: from the live
     * share-partition if loaded, else from the persisted state; {@link OffsetSummary#NONE} if the
     * group never fetched it. The lag counts to the end of the records' source (on a gateway,
     * the upstream's high watermark, not its mirror's).
     */
    public CompletableFuture<OffsetSummary> summary(TopicPartition tp, SharePartitionKey key) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(OffsetSummary.NONE);
        }
        return live.source().endOffset(partition).thenCompose(endOffset -> partition.shard().call(() -> {
            SharePartitions.Holder holder = live.holder(partition, key, false);
            SharePartition sp = holder == null ? null : holder.loaded();
            if (sp != null) {
                return OffsetSummary.of(sp, endOffset);
            }
            return stored(persister.read(key), endOffset);
        }));
    }

    /**
     * A stored start offset lags by one write (each write carries the start offset as it was
     * before that write's own acknowledgements), so settled records right at the start are
     * skipped here as loading the share-partition would.
     */
    private static OffsetSummary stored(ShareState stored, long endOffset) {
        if (stored == null || stored.startOffset() < 0) {
            return OffsetSummary.NONE;
        }
        long start = stored.startOffset();
        long complete = 0;
        for (PersistedBatch b : stored.batches()) {
            if (b.lastOffset() < start) {
                continue;
            }
            boolean settled = b.state() != PersistedBatch.AVAILABLE;
            if (settled && b.firstOffset() <= start) {
                start = b.lastOffset() + 1;
            } else if (settled) {
                complete += b.lastOffset() - b.firstOffset() + 1;
            }
        }
        return OffsetSummary.of(start, endOffset, complete);
    }

    /**
     * AlterShareGroupOffsets for one share-partition of an Empty group: forgets the in-memory
     * state and re-initialises the persisted one at {@code startOffset} (bumping its state
     * epoch, which fences writes of the forgotten state), so the next fetch loads it and starts
     * there.
     */
    public CompletableFuture<Void> reset(SharePartitionKey key, long startOffset) {
        return live.forget(partitions.shards(), key, h -> { }).thenCompose(v -> {
            live.addStateKey(key);
            return persister.initialize(key, startOffset);
        });
    }

    /** Drops a share-partition's state, in memory and persisted (DeleteShareGroupOffsets). */
    public CompletableFuture<Void> deleteState(SharePartitionKey key) {
        return live.forget(partitions.shards(), key, h -> events.forget(key, h.partition)).thenCompose(v -> {
            live.removeStateKey(key);
            return persister.delete(key);
        });
    }

    /** Drops the state of every share-partition of a group (DeleteGroups). */
    public CompletableFuture<Void> deleteGroupState(String groupId) {
        return CompletableFuture.allOf(stateKeys(groupId).stream()
                .map(this::deleteState)
                .toArray(CompletableFuture[]::new));
    }
}
