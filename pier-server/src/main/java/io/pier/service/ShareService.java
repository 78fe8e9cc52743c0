package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.GroupConfig;
import io.pier.log.PartitionLog;
import io.pier.log.SegmentBatches;
import io.pier.share.AckBatch;
import io.pier.share.AckResult;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquiredRange;
import io.pier.share.Isolation;
import io.pier.share.LogBatch;
import io.pier.share.PendingChange;
import io.pier.share.RecordKeys;
import io.pier.share.SharePartition;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import io.pier.state.ShareStateWrite;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What share consumers do to share-partitions: acquire records, acknowledge them, release what a
 * member holds. Each call runs on the shard that owns the topic-partition.
 *
 * <p>Acknowledgements and releases are two-phase: the engine settles them tentatively, the
 * persister writes them, and only then (back on the shard) are they committed or rolled back, so
 * a client never hears of a change that is not durable.
 */
public final class ShareService {
    private static final Logger LOG = LoggerFactory.getLogger(ShareService.class);
    /** Reads one acquisition may make while each finds only records no consumer gets. */
    private static final int MAX_READS_PER_ACQUISITION = 8;
    /** Bytes per read when learning the keys of the records in an ordered share-partition's window. */
    private static final int KEY_READ_BYTES = 1 << 20;
    /**
     * An acquisition write taking more than 1/this of the lock duration restarts the locks once
     * durable; a local fsync of a few ms never does, so the broker's path pays nothing for it.
     */
    private static final int LOCK_LOST_TO_WRITE = 100;

    private final Clock clock;
    private final ShareGroups groups;
    private final SharePersister persister;
    private final PartitionRegistry partitions;
    private final SharePartitions live;
    private final boolean durableDeliveryCounts;

    /**
     * What one partition gave to one fetch.
     *
     * @param heldUpByMs when nothing was given because the fetching member itself holds this
     *     partition up: how long its fetches have found it so (see {@link SharePartition#heldUpByMs});
     *     else -1
     */
    public record Acquired(Errors error, BaseRecords records, List<AcquiredRange> ranges, long heldUpByMs) {
        public static final Acquired NONE = new Acquired(Errors.NONE, MemoryRecords.EMPTY, List.of(), -1);

        Acquired(Errors error, BaseRecords records, List<AcquiredRange> ranges) {
            this(error, records, ranges, -1);
        }

        /** Nothing given, for {@code error}. */
        public static Acquired failed(Errors error) {
            return new Acquired(error, MemoryRecords.EMPTY, List.of());
        }

        /** Nothing given, because the fetching member holds the partition up (found so {@code ms} ago). */
        static Acquired heldUpBy(long ms) {
            return new Acquired(Errors.NONE, MemoryRecords.EMPTY, List.of(), ms);
        }

        public long recordCount() {
            long n = 0;
            for (AcquiredRange r : ranges) {
                n += r.recordCount();
            }
            return n;
        }
    }

    /**
     * @param durableDeliveryCounts persist every acquisition (AVAILABLE with its new delivery
     *     count) before the fetch response carries it, so a crash never under-counts deliveries
     */
    ShareService(ShareGroups groups, SharePersister persister, PartitionRegistry partitions, SharePartitions live,
            Clock clock, boolean durableDeliveryCounts) {
        this.clock = clock;
        this.groups = groups;
        this.persister = persister;
        this.partitions = partitions;
        this.live = live;
        this.durableDeliveryCounts = durableDeliveryCounts;
    }

    /**
     * Acquires records of {@code tp} for a member. If nothing could be acquired and {@code wake}
     * is given, it is registered to run when that may have changed; the result then also says
     * whether the member is itself what keeps anything from being acquired.
     */
    public CompletableFuture<Acquired> acquire(TopicPartition tp, SharePartitionKey key, String memberId,
            AcquireLimits limits, int maxBytes, Partition.DataListener wake) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(Acquired.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION));
        }
        return live.with(partition, key, true, Acquired.NONE, (holder, sp) -> {
            if (partition.isDeleted()) {
                return CompletableFuture.completedFuture(Acquired.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION));
            }
            Acquired acquired = acquireOnShard(partition, holder, sp, memberId, limits, maxBytes);
            if (acquired.ranges().isEmpty()) {
                if (wake != null) {
                    holder.waiters.park(wake);
                }
                long heldUpMs = sp.heldUpByMs(memberId, partition.shard().nowMs());
                return CompletableFuture.completedFuture(heldUpMs >= 0 ? Acquired.heldUpBy(heldUpMs) : acquired);
            }
            return durableDeliveryCounts ? persistAcquisition(partition, sp, memberId, acquired)
                    : CompletableFuture.completedFuture(acquired);
        }).exceptionally(ShareService::notAcquired);
    }

    /**
     * Starts loading {@code key}'s share-partition, if it is not loaded, without waiting: a gateway
     * node does this for every partition a ShareFetch adds, so the loads (each a round trip to the
     * upstream) run side by side and their first writes share commits, where acquisition would
     * load them one after the other.
     */
    public void preload(TopicPartition tp, SharePartitionKey key) {
        Partition partition = partitions.get(tp);
        if (partition != null) {
            var unused = live.with(partition, key, true, null, (holder, sp) -> CompletableFuture.completedFuture(null));
        }
    }

    /**
     * A storage failure before anything was acquired: the share-partition's first start offset
     * could not be made durable (the share-state log failed, and the broker is stopping) or its log
     * could not be read. The partition answers KAFKA_STORAGE_ERROR, which the share consumer takes
     * in its stride (it refreshes metadata and fetches again), as for a failed acquisition write;
     * the rest of the ShareFetch is answered. Any other failure is a broken invariant and fails
     * the request.
     */
    private static Acquired notAcquired(Throwable failure) {
        if (Futures.unwrap(failure) instanceof NotLeaderOrFollowerException) {
            return Acquired.failed(Errors.NOT_LEADER_OR_FOLLOWER); // a gateway node that does not serve it
        }
        LOG.warn("Acquiring failed; the partition answers KAFKA_STORAGE_ERROR", Futures.storageFailure(failure));
        return Acquired.failed(Errors.KAFKA_STORAGE_ERROR);
    }

    /**
     * Makes the new delivery counts durable (as AVAILABLE with that count, which a crash turns
     * back into exactly that) before the records are handed out. If that fails the records are
     * not sent; their locks expire and they come back with the count already spent, which
     * over-counts but never exceeds the limit. A write that took more than {@link
     * #LOCK_LOST_TO_WRITE} of the lock (a gateway's round trip to its upstream, a slow disk)
     * starts the records' locks again once it is durable, before the answer goes out: the member
     * gets its whole lock from when it can see the records, not what the write left of it.
     */
    private CompletableFuture<Acquired> persistAcquisition(Partition partition, SharePartition sp, String memberId,
            Acquired acquired) {
        Shard shard = partition.shard();
        long acquiredAtMs = clock.monoMs();
        List<PersistedBatch> batches = new ArrayList<>(acquired.ranges().size());
        for (AcquiredRange r : acquired.ranges()) {
            batches.add(new PersistedBatch(r.firstOffset(), r.lastOffset(), PersistedBatch.AVAILABLE,
                    r.deliveryCount()));
        }
        SharePartitionKey key = sp.key();
        return persister.write(new ShareStateWrite(key, sp.stateEpoch(), -1, batches))
                .thenCompose(v -> {
                    if ((clock.monoMs() - acquiredAtMs) * LOCK_LOST_TO_WRITE <= lockDurationMs(key.groupId())) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return shard.call(() -> {
                        sp.restartLocks(memberId, acquired.ranges(), shard.nowMs());
                        return null;
                    });
                })
                .handle((v, failure) -> {
                    if (failure == null) {
                        return acquired;
                    }
                    if (Futures.unwrap(failure) instanceof NotLeaderOrFollowerException) {
                        // A gateway node whose state partition moved away meanwhile: the client must
                        // hear NOT_LEADER_OR_FOLLOWER, the one answer that unpins the partition from
                        // this node in kafka-clients' share consumer.
                        return Acquired.failed(Errors.NOT_LEADER_OR_FOLLOWER);
                    }
                    LOG.warn("Persisting acquisitions of {} failed; not delivering them", key, failure);
                    // A storage error is one the client takes in its stride (it refreshes metadata
                    // and fetches again); most other codes would make its poll() throw.
                    return Acquired.failed(Errors.KAFKA_STORAGE_ERROR);
                });
    }

    private Acquired acquireOnShard(Partition partition, SharePartitions.Holder holder, SharePartition sp,
            String memberId, AcquireLimits limits, int maxBytes) throws IOException {
        PartitionLog log = partition.log();
        if (sp.nextFetchOffset() < log.logStartOffset()) {
            sp.onLogStartOffsetMoved(log.logStartOffset());
        }
        GroupConfig group = groups.config(sp.key().groupId());
        boolean ordered = group.effectiveOrderByKey();
        long keysToLearn = ordered ? sp.keysToLearn() : 0;
        if (keysToLearn > 0) {
            // Ordered by key after a load (or ordering just turned on): the keys of the records
            // already in the window come from the log before anything is acquired.
            RecordKeyHashes keys = RecordKeyHashes.read(log, sp.startOffset(), keysToLearn, KEY_READ_BYTES);
            if (keys.knownEnd() < keysToLearn) {
                // The log does not hold them yet (a gateway's mirror, just started, still fetching
                // them): nothing goes before the keys are known, and the fetch waits for the records.
                return Acquired.NONE;
            }
            sp.learnKeys(keys);
        }
        boolean committed = group.effectiveIsolationLevel() == IsolationLevel.READ_COMMITTED;
        // read_committed acquires below the last stable offset only (Kafka's TXN_COMMITTED fetch).
        long readable = committed ? log.lastStableOffset() : log.highWatermark();
        if (limits.maxRecords() <= 0 || !sp.hasAcquirableWork(readable)) {
            return Acquired.NONE;
        }
        // A read holding nothing to acquire (only markers, or under read_committed only aborted
        // records) still moves the start offset: read on from there rather than park the fetch
        // while records wait past what was read.
        for (int reads = 0; reads < MAX_READS_PER_ACQUISITION; reads++) {
            long fetchOffset = sp.nextFetchOffset();
            if (fetchOffset >= readable) {
                return Acquired.NONE;
            }
            SegmentBatches read = log.readBatchesInPlace(fetchOffset, readBudget(partition, limits, maxBytes), true);
            if (read.isEmpty()) {
                return Acquired.NONE;
            }
            RecordKeys keys = ordered ? newRecordKeys(holder, log, sp, fetchOffset, read, readBudget(partition, limits,
                    maxBytes)) : RecordKeys.NONE;
            List<AcquiredRange> ranges = sp.acquire(memberId, fetchOffset, logBatches(partition, read), limits,
                    isolation(log, committed, readable, fetchOffset, read), keys, partition.shard().nowMs());
            if (!ranges.isEmpty()) {
                if (sp.hasAcquirableWork(readable)) {
                    holder.waiters.wakeOne(); // what this fetch left is work for the next parked one
                }
                // The whole log batches spanning the first to the last acquired offset, sent from the files.
                return new Acquired(Errors.NONE,
                        read.records(ranges.get(0).firstOffset(), ranges.get(ranges.size() - 1).lastOffset()),
                        ranges);
            }
            if (sp.nextFetchOffset() <= fetchOffset || !sp.hasAcquirableWork(readable)) {
                return Acquired.NONE;
            }
        }
        return Acquired.NONE;
    }

    /**
     * Ordered by key: the keys of the records {@code read} holds past the in-flight window. The
     * window knows the keys of the records it holds; those of the records past it come from the
     * share-partition's stretch of keys read ahead, which grows by reading the log again (a copy,
     * parsed) only where no earlier acquisition read it.
     */
    private static RecordKeys newRecordKeys(SharePartitions.Holder holder, PartitionLog log, SharePartition sp,
            long fetchOffset, SegmentBatches read, int readBytes) throws IOException {
        long windowEnd = sp.startOffset() + sp.inFlightRecords();
        long from = Math.max(fetchOffset, windowEnd);
        long readEnd = read.lastOffset(read.count() - 1) + 1;
        if (from >= readEnd || !sp.hasRoomPastWindow()) {
            return RecordKeys.NONE; // nothing past the window read, or no room to take any of it
        }
        RecordKeyHashes ahead = holder.keysAhead;
        if (ahead == null || from < ahead.startOffset() || ahead.knownEnd() > log.logEndOffset()) {
            // The first, or the window went back (a reload) or the log was cut short (a mirror's upstream)
            ahead = RecordKeyHashes.startingAt(from);
            holder.keysAhead = ahead;
        }
        ahead.forgetBelow(from);
        ahead.readUpTo(log, readEnd, readBytes);
        return ahead;
    }

    /** The batches of a read as the share-partition sees them; also feeds the record-size estimate. */
    private static List<LogBatch> logBatches(Partition partition, SegmentBatches read) {
        List<LogBatch> batches = new ArrayList<>(read.count());
        long recordsRead = 0;
        for (int i = 0; i < read.count(); i++) {
            batches.add(new LogBatch(read.baseOffset(i), read.lastOffset(i), read.isControl(i), read.producerId(i),
                    read.isTransactional(i)));
            recordsRead += read.lastOffset(i) - read.baseOffset(i) + 1;
        }
        partition.observeRecordSize(read.sizeInBytes(), recordsRead);
        return batches;
    }

    /**
     * What the share-partition may acquire of {@code read}: everything under read_uncommitted;
     * under read_committed what lies below {@code lastStableOffset}, less the aborted transactions
     * overlapping the read (looked up only when it holds a transactional batch).
     */
    private static Isolation isolation(PartitionLog log, boolean committed, long lastStableOffset, long fetchOffset,
            SegmentBatches read) {
        if (!committed) {
            return Isolation.READ_UNCOMMITTED;
        }
        boolean transactional = false;
        for (int i = 0; i < read.count() && !transactional; i++) {
            transactional = read.isTransactional(i) && !read.isControl(i);
        }
        if (!transactional) {
            return Isolation.readCommitted(lastStableOffset, List.of());
        }
        long upperBound = Math.min(lastStableOffset, read.lastOffset(read.count() - 1) + 1);
        return Isolation.readCommitted(lastStableOffset, log.abortedTransactions(fetchOffset, upperBound));
    }

    /**
     * How much of the log to read for one acquisition: about twice what MaxRecords needs at the
     * partition's usual record size, never more than the fetch's byte budget. Reading the whole
     * budget (50 MB by default) to hand out a few hundred records made every fetch walk (then
     * still copy) the backlog, so throughput fell as the backlog grew.
     */
    private static int readBudget(Partition partition, AcquireLimits limits, int maxBytes) {
        long wanted = (long) (2.0 * limits.maxRecords() * partition.bytesPerRecord());
        long floor = 16 * 1024;
        return (int) Math.max(1, Math.min(maxBytes, Math.max(floor, wanted)));
    }

    /**
     * Applies a member's acknowledgements; completes once they are durable (or rolled back). A
     * share-partition that is not live (nothing was fetched here, or the broker restarted) answers
     * UNKNOWN_TOPIC_OR_PARTITION: the client drops these acks and the records come back through
     * redelivery.
     */
    public CompletableFuture<Errors> acknowledge(TopicPartition tp, SharePartitionKey key, String memberId,
            List<AckBatch> batches) {
        return acknowledgeInStages(tp, key, memberId, batches).outcome();
    }

    /**
     * An acknowledgement in its two stages: {@code applied} completes once the records are settled
     * tentatively on the partition's shard (their write is then on its way), {@code outcome} as
     * {@link #acknowledge} does. Work started after {@code applied} (a ShareFetch's acquisition)
     * sees those records as leaving, and its own write joins theirs.
     */
    public record AckStages(CompletableFuture<Void> applied, CompletableFuture<Errors> outcome) {
        public static AckStages done(Errors error) {
            return new AckStages(CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(error));
        }
    }

    /** {@link #acknowledge}, with the moment the change is applied on the shard as a stage of its own. */
    public AckStages acknowledgeInStages(TopicPartition tp, SharePartitionKey key, String memberId,
            List<AckBatch> batches) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return AckStages.done(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        if (!persister.serves(key)) {
            return AckStages.done(Errors.NOT_LEADER_OR_FOLLOWER); // a gateway node that does not serve it
        }
        CompletableFuture<Errors> outcome = new CompletableFuture<>();
        CompletableFuture<Void> applied = live.with(partition, key, false, Boolean.FALSE, (holder, sp) -> {
            AckResult result = sp.acknowledge(memberId, batches, partition.shard().nowMs());
            if (result.isError()) {
                outcome.complete(result.error());
            } else {
                Futures.forward(persistThenResolve(partition, sp, result.pending()), outcome);
            }
            return CompletableFuture.completedFuture(Boolean.TRUE);
        }).handle((ran, failure) -> {
            if (failure != null) {
                outcome.completeExceptionally(failure);
            } else if (!ran) {
                // Not live here (nothing fetched, or the broker restarted): the client drops these
                // acks and the records come back through redelivery.
                outcome.complete(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            return null;
        });
        return new AckStages(applied, outcome);
    }

    /** Shard thread only: makes {@code change} durable, then commits it (or rolls it back) on the shard. */
    private CompletableFuture<Errors> persistThenResolve(Partition partition, SharePartition sp, PendingChange change) {
        Optional<ShareStateWrite> write = change.write();
        CompletableFuture<Void> durable = write.isPresent()
                ? persister.write(write.get())
                : CompletableFuture.completedFuture(null);
        CompletableFuture<Errors> outcome = new CompletableFuture<>();
        // handle, not whenComplete: the stage whenComplete returns fails with the write's own
        // failure, which would fail the outcome before the shard could roll back and answer.
        durable.handle((v, failure) -> {
            partition.shard().execute(() -> {
                if (failure == null) {
                    sp.commit(change);
                } else {
                    LOG.warn("Persisting share state of {} failed; rolling back", sp.key(), failure);
                    sp.rollback(change);
                }
                live.wakeIfAcquirable(partition, sp);
                outcome.complete(failure == null ? Errors.NONE : Errors.COORDINATOR_NOT_AVAILABLE);
            });
            return null;
        }).exceptionally(Futures.failing(outcome));
        return outcome;
    }

    /** Releases everything a member holds on a share-partition (its share session ended). */
    public void releaseMember(TopicPartition tp, SharePartitionKey key, String memberId) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return;
        }
        live.with(partition, key, false, Errors.NONE, (holder, sp) -> sp.releaseMember(memberId,
                        partition.shard().nowMs())
                .map(change -> persistThenResolve(partition, sp, change))
                .orElse(CompletableFuture.completedFuture(Errors.NONE)))
                .exceptionally(t -> {
                    // Not released now, the records come back when their locks expire.
                    LOG.warn("Releasing the records of member {} on {} failed", memberId, key, t);
                    return null;
                });
    }

    /** The duty step that expires acquisition locks of the share-partitions {@code shard} owns. */
    DutyStep lockExpiry(Shard shard) {
        return new DutyStep() {
            private long nextMs = Long.MAX_VALUE;

            @Override
            public int onCycle(long nowMs) {
                int[] expired = {0};
                long[] next = {Long.MAX_VALUE};
                live.forEachLoaded(shard, (partition, sp) -> {
                    if (nowMs >= sp.nextDeadlineMs()) {
                        expired[0]++;
                        sp.expireLocks(nowMs).ifPresent(write -> persister.write(write).exceptionally(t -> {
                            LOG.warn("Persisting lock expiry of {} failed; the expiry stands", sp.key(), t);
                            return null;
                        }));
                        live.wakeIfAcquirable(partition, sp);
                    }
                    next[0] = Math.min(next[0], sp.nextDeadlineMs());
                });
                nextMs = next[0];
                return expired[0];
            }

            @Override
            public long nextDeadlineMs() {
                return nextMs;
            }

            @Override
            public String toString() {
                return "lock expiry";
            }
        };
    }

    /** Lock duration the group's consumers are told about. */
    public int lockDurationMs(String groupId) {
        return (int) groups.shareConfig(groupId).lockDurationMs();
    }
}
