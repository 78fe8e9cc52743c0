package io.pier.service;

import io.pier.share.SharePartition;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import io.pier.state.ShareState;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The share-group offset admin side: start offset and lag per share-partition (from the live
 * share-partition on its shard, or from stored state after a restart), and resetting or dropping
 * a share-partition's state for AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups.
 * On a gateway, the state of share-partitions another node serves is read and changed through
 * that node ({@link ShareStateElsewhere}).
 */
public final class ShareOffsets {
    private final SharePersister persister;
    private final PartitionRegistry partitions;
    private final SharePartitions live;
    private final ShareEventsFactory events;
    private volatile ShareStateElsewhere elsewhere = ShareStateElsewhere.NONE;

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
        static OffsetSummary of(StateSummary state, long endOffset) {
            if (state.startOffset() < 0) {
                return NONE;
            }
            return new OffsetSummary(state.startOffset(),
                    Math.max(0, endOffset - state.startOffset() - state.deliveryCompleteCount()));
        }

        static OffsetSummary of(SharePartition sp, long endOffset) {
            return of(new StateSummary(null, sp.startOffset(), sp.deliveryCompleteCount()), endOffset);
        }
    }

    /**
     * What a share-partition's state says of its progress, as ReadShareGroupStateSummary carries
     * it between nodes: its start offset (-1 without state) and how many records past it are
     * delivered for good. The lag needs the partition's end besides, which the asking node reads.
     */
    public record StateSummary(SharePartitionKey key, long startOffset, long deliveryCompleteCount) {
        static StateSummary none(SharePartitionKey key) {
            return new StateSummary(key, -1, 0);
        }
    }

    /** Where the state of share-partitions this node does not serve is asked for (a gateway's other nodes). */
    public void elsewhere(ShareStateElsewhere elsewhere) {
        this.elsewhere = elsewhere;
    }

    /** Whether this node serves {@code key}'s state (always, on a single broker). */
    public boolean servesHere(SharePartitionKey key) {
        return persister.serves(key);
    }

    /** The share-partitions of a group with state on this node, by topic id then partition. */
    public List<SharePartitionKey> stateKeysHere(String groupId) {
        return live.stateKeys(groupId);
    }

    /** The share-partitions of a group that have state, on this node or another, by topic id then partition. */
    public CompletableFuture<List<SharePartitionKey>> stateKeys(String groupId) {
        List<SharePartitionKey> here = stateKeysHere(groupId);
        return elsewhere.groupStates(groupId).thenApply(others -> {
            if (others.isEmpty()) {
                return here;
            }
            java.util.TreeSet<SharePartitionKey> all = new java.util.TreeSet<>(
                    Comparator.comparing(SharePartitionKey::topicId).thenComparingInt(SharePartitionKey::partition));
            all.addAll(here);
            others.forEach(s -> all.add(s.key()));
            return List.copyOf(all);
        });
    }

    /**
     * Start offset and lag of one share-partition: its state read where it is served, then the
     * end of the records' source (on a gateway, the upstream's high watermark, not its mirror's);
     * {@link OffsetSummary#NONE} if the group never fetched it.
     */
    public CompletableFuture<OffsetSummary> summary(TopicPartition tp, SharePartitionKey key) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(OffsetSummary.NONE);
        }
        // The end is read first: the state read after it cannot make the lag count records past it.
        return live.source().endOffset(partition).thenCompose(endOffset -> (servesHere(key)
                        ? stateSummaryHere(partition, key) : elsewhere.summary(key))
                .thenApply(state -> OffsetSummary.of(state, endOffset)));
    }

    /**
     * The state summary of a share-partition this node serves, read on the partition's shard:
     * from the live share-partition if loaded, else from the persisted state.
     */
    public CompletableFuture<StateSummary> stateSummaryHere(TopicPartition tp, SharePartitionKey key) {
        Partition partition = partitions.get(tp);
        return partition == null ? CompletableFuture.completedFuture(StateSummary.none(key))
                : stateSummaryHere(partition, key);
    }

    private CompletableFuture<StateSummary> stateSummaryHere(Partition partition, SharePartitionKey key) {
        return partition.shard().call(() -> {
            SharePartitions.Holder holder = live.holder(partition, key, false);
            SharePartition sp = holder == null ? null : holder.loaded();
            if (sp != null) {
                return new StateSummary(key, sp.startOffset(), sp.deliveryCompleteCount());
            }
            return stored(key, persister.read(key));
        });
    }

    /**
     * A stored start offset lags by one write (each write carries the start offset as it was
     * before that write's own acknowledgements), so settled records right at the start are
     * skipped here as loading the share-partition would.
     */
    private static StateSummary stored(SharePartitionKey key, ShareState stored) {
        if (stored == null || stored.startOffset() < 0) {
            return StateSummary.none(key);
        }
        long start = stored.startOffset();
        long complete = 0;
        for (PersistedBatch b : stored.batches()) {
            if (b.lastOffset() < start) {
                continue;
            }
            boolean settled = b.isSettled();
            if (settled && b.firstOffset() <= start) {
                start = b.lastOffset() + 1;
            } else if (settled) {
                complete += b.lastOffset() - b.firstOffset() + 1;
            }
        }
        return new StateSummary(key, start, complete);
    }

    /**
     * AlterShareGroupOffsets for one share-partition of an Empty group: forgets the in-memory
     * state and re-initialises the persisted one at {@code startOffset} (bumping its state
     * epoch, which fences writes of the forgotten state), so the next fetch loads it and starts
     * there.
     */
    public CompletableFuture<Void> reset(SharePartitionKey key, long startOffset) {
        if (!servesHere(key)) {
            return elsewhere.reset(key, startOffset);
        }
        return live.forget(partitions.shards(), key, h -> { }).thenCompose(v -> {
            live.addStateKey(key);
            return persister.initialize(key, startOffset);
        });
    }

    /** Drops a share-partition's state, in memory and persisted (DeleteShareGroupOffsets). */
    public CompletableFuture<Void> deleteState(SharePartitionKey key) {
        if (!servesHere(key)) {
            return elsewhere.delete(key);
        }
        return live.forget(partitions.shards(), key, h -> events.forget(key, h.partition)).thenCompose(v -> {
            live.removeStateKey(key);
            return persister.delete(key);
        });
    }

    /** Drops the state of every share-partition of a group (DeleteGroups). */
    public CompletableFuture<Void> deleteGroupState(String groupId) {
        return stateKeys(groupId).thenCompose(keys -> CompletableFuture.allOf(keys.stream()
                .map(this::deleteState)
                .toArray(CompletableFuture[]::new)));
    }
}
