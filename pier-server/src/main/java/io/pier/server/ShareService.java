package io.pier.server;

import io.pier.common.Clock;
import io.pier.group.AutoOffsetReset;
import io.pier.log.LogReadResult;
import io.pier.log.OffsetAndTimestamp;
import io.pier.log.PartitionLog;
import io.pier.protocol.Futures;
import io.pier.share.AckBatch;
import io.pier.share.AckResult;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquiredRange;
import io.pier.share.LogBatch;
import io.pier.share.PendingChange;
import io.pier.share.SharePartition;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import io.pier.state.ShareState;
import io.pier.state.ShareStateWrite;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The share-partitions of every share group on this broker. Each lives on the shard that owns
 * its topic-partition and is only touched there; this class hops to that shard for every call.
 *
 * <p>Acknowledgements and releases are two-phase: the engine settles them tentatively, the
 * persister writes them, and only then (back on the shard) are they committed or rolled back, so
 * a client never hears of a change that is not durable.
 */
public final class ShareService {
    private static final Logger LOG = LoggerFactory.getLogger(ShareService.class);

    private final ShareGroups groups;
    private final SharePersister persister;
    private final Clock clock;
    private final ShareEventsFactory events;
    private final boolean durableDeliveryCounts;
    private final Map<SharePartitionKey, Holder> holders = new ConcurrentHashMap<>();
    /** Every key with state in the persister, loaded or not (for DescribeShareGroupOffsets). */
    private final Set<SharePartitionKey> stateKeys = ConcurrentHashMap.newKeySet();
    /** Per shard, the holders it owns; each list is only touched on its shard. */
    private final List<List<Holder>> byShard = new ArrayList<>();

    /** One share-partition and the future that completes once its state is loaded or initialised. */
    private static final class Holder {
        final Partition partition;
        final CompletableFuture<SharePartition> ready;

        Holder(Partition partition, CompletableFuture<SharePartition> ready) {
            this.partition = partition;
            this.ready = ready;
        }

        /** The share-partition once it has loaded; null while loading or if loading failed. */
        SharePartition loaded() {
            return ready.isDone() && !ready.isCompletedExceptionally() ? ready.join() : null;
        }
    }

    /** What one partition gave to one fetch. */
    public record Acquired(Errors error, MemoryRecords records, List<AcquiredRange> ranges) {
        public static final Acquired NONE = new Acquired(Errors.NONE, MemoryRecords.EMPTY, List.of());

        /** Nothing given, for {@code error}. */
        public static Acquired failed(Errors error) {
            return new Acquired(error, MemoryRecords.EMPTY, List.of());
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
     * @param events where share-partitions report their state changes (metrics)
     */
    ShareService(ShareGroups groups, SharePersister persister, Clock clock, Shard[] shards,
            boolean durableDeliveryCounts, ShareEventsFactory events) {
        this.durableDeliveryCounts = durableDeliveryCounts;
        this.groups = groups;
        this.persister = persister;
        this.clock = clock;
        this.events = events;
        stateKeys.addAll(persister.keys());
        for (Shard shard : shards) {
            List<Holder> owned = new ArrayList<>();
            byShard.add(owned);
            shard.execute(() -> shard.addTicker(nowMs -> expireLocks(owned, nowMs)));
        }
    }

    /**
     * Acquires records of {@code partition} for a member. If nothing could be acquired and
     * {@code wake} is given, it is registered to run when that may have changed.
     */
    public CompletableFuture<Acquired> acquire(Partition partition, SharePartitionKey key, String memberId,
            AcquireLimits limits, int maxBytes, Partition.DataListener wake) {
        CompletableFuture<SharePartition> ready = sharePartition(partition, key);
        CompletableFuture<Acquired> got = ready.thenCompose(sp -> partition.shard().call(() -> {
            if (partition.isDeleted()) {
                return Acquired.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            Acquired acquired = acquireOnShard(partition, sp, memberId, limits, maxBytes);
            if (acquired.ranges().isEmpty() && wake != null) {
                partition.onNextDataChange(wake);
            }
            return acquired;
        }));
        if (!durableDeliveryCounts) {
            return got;
        }
        return got.thenCompose(acquired -> acquired.ranges().isEmpty()
                ? CompletableFuture.completedFuture(acquired)
                : persistAcquisition(ready.join(), acquired));
    }

    /**
     * Makes the new delivery counts durable (as AVAILABLE with that count, which a crash turns
     * back into exactly that) before the records are handed out. If that fails the records are
     * not sent; their locks expire and they come back with the count already spent, which
     * over-counts but never exceeds the limit.
     */
    private CompletableFuture<Acquired> persistAcquisition(SharePartition sp, Acquired acquired) {
        List<PersistedBatch> batches = new ArrayList<>(acquired.ranges().size());
        for (AcquiredRange r : acquired.ranges()) {
            batches.add(new PersistedBatch(r.firstOffset(), r.lastOffset(), PersistedBatch.AVAILABLE,
                    r.deliveryCount()));
        }
        return persister.write(new ShareStateWrite(sp.key(), sp.stateEpoch(), -1, batches))
                .handle((v, failure) -> {
                    if (failure == null) {
                        return acquired;
                    }
                    LOG.warn("Persisting acquisitions of {} failed; not delivering them", sp.key(), failure);
                    // A storage error is one the client takes in its stride (it refreshes metadata
                    // and fetches again); most other codes would make its poll() throw.
                    return Acquired.failed(Errors.KAFKA_STORAGE_ERROR);
                });
    }

    private Acquired acquireOnShard(Partition partition, SharePartition sp, String memberId, AcquireLimits limits,
            int maxBytes) throws IOException {
        PartitionLog log = partition.log();
        if (sp.nextFetchOffset() < log.logStartOffset()) {
            sp.onLogStartOffsetMoved(log.logStartOffset());
        }
        long hw = log.highWatermark();
        if (limits.maxRecords() <= 0 || !sp.hasAcquirableWork(hw)) {
            return Acquired.NONE;
        }
        long fetchOffset = sp.nextFetchOffset();
        if (fetchOffset >= hw) {
            return Acquired.NONE;
        }
        LogReadResult read = log.read(fetchOffset, readBudget(partition, limits, maxBytes), true);
        List<LogBatch> batches = new ArrayList<>();
        long recordsRead = 0;
        for (RecordBatch b : read.records().batches()) {
            batches.add(new LogBatch(b.baseOffset(), b.lastOffset()));
            recordsRead += b.lastOffset() - b.baseOffset() + 1;
        }
        partition.observeRecordSize(read.records().sizeInBytes(), recordsRead);
        if (batches.isEmpty()) {
            return Acquired.NONE;
        }
        List<AcquiredRange> ranges = sp.acquire(memberId, fetchOffset, batches, limits, clock.monoMs());
        if (ranges.isEmpty()) {
            return Acquired.NONE;
        }
        return new Acquired(Errors.NONE, slice(read.records(), ranges), ranges);
    }

    /**
     * How much of the log to read for one acquisition: about twice what MaxRecords needs at the
     * partition's usual record size, never more than the fetch's byte budget. Reading the whole
     * budget (50 MB by default) to hand out a few hundred records made every fetch copy and walk
     * the backlog, so throughput fell as the backlog grew.
     */
    private static int readBudget(Partition partition, AcquireLimits limits, int maxBytes) {
        long wanted = (long) (2.0 * limits.maxRecords() * partition.bytesPerRecord());
        long floor = 16 * 1024;
        return (int) Math.max(1, Math.min(maxBytes, Math.max(floor, wanted)));
    }

    /** The whole log batches spanning the first to the last acquired offset. */
    private static MemoryRecords slice(MemoryRecords records, List<AcquiredRange> ranges) {
        long first = ranges.get(0).firstOffset();
        long last = ranges.get(ranges.size() - 1).lastOffset();
        int start = -1;
        int end = 0;
        int position = 0;
        for (RecordBatch b : records.batches()) {
            int size = b.sizeInBytes();
            if (b.lastOffset() >= first && b.baseOffset() <= last) {
                if (start < 0) {
                    start = position;
                }
                end = position + size;
            }
            position += size;
        }
        if (start < 0) {
            return MemoryRecords.EMPTY;
        }
        ByteBuffer buf = records.buffer().duplicate();
        buf.position(buf.position() + start);
        buf.limit(buf.position() + (end - start));
        return MemoryRecords.readableRecords(buf.slice());
    }

    /** Applies a member's acknowledgements; completes once they are durable (or rolled back). */
    public CompletableFuture<Errors> acknowledge(Partition partition, SharePartitionKey key, String memberId,
            List<AckBatch> batches) {
        Holder holder = holders.get(key);
        if (holder == null) {
            // Nothing was ever fetched for this group here (or the broker restarted): the client
            // drops these acks and its records come back through redelivery.
            return CompletableFuture.completedFuture(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        return holder.ready.thenCompose(sp -> partition.shard().call(() -> sp.acknowledge(memberId, batches,
                clock.monoMs()))).thenCompose(result -> settle(partition, holder, result));
    }

    private CompletableFuture<Errors> settle(Partition partition, Holder holder, AckResult result) {
        if (result.isError()) {
            return CompletableFuture.completedFuture(result.error());
        }
        return persistThenResolve(partition, holder, result.pending());
    }

    private CompletableFuture<Errors> persistThenResolve(Partition partition, Holder holder, PendingChange change) {
        Optional<ShareStateWrite> write = change.write();
        CompletableFuture<Void> durable = write.isPresent()
                ? persister.write(write.get())
                : CompletableFuture.completedFuture(null);
        CompletableFuture<Errors> outcome = new CompletableFuture<>();
        durable.whenComplete((v, failure) -> partition.shard().execute(() -> {
            SharePartition sp = holder.ready.join();
            if (failure == null) {
                sp.commit(change);
            } else {
                LOG.warn("Persisting share state of {} failed; rolling back", sp.key(), failure);
                sp.rollback(change);
            }
            if (sp.consumeStateChanged()) {
                partition.fireDataListeners();
            }
            outcome.complete(failure == null ? Errors.NONE : Errors.COORDINATOR_NOT_AVAILABLE);
        })).exceptionally(Futures.failing(outcome)); // e.g. the shard no longer takes tasks
        return outcome;
    }

    /** Releases everything a member holds on these partitions (session closed or connection lost). */
    public void releaseMember(Partition partition, SharePartitionKey key, String memberId) {
        Holder holder = holders.get(key);
        if (holder == null) {
            return;
        }
        holder.ready.thenAccept(sp -> partition.shard().execute(() -> sp.releaseMember(memberId, clock.monoMs())
                .ifPresent(change -> persistThenResolve(partition, holder, change)
                        .exceptionally(t -> releaseFailed(key, memberId, t)))))
                .exceptionally(t -> releaseFailed(key, memberId, t));
    }

    private static <T> T releaseFailed(SharePartitionKey key, String memberId, Throwable t) {
        LOG.warn("Releasing what {} holds on {} failed", memberId, key, Futures.unwrap(t));
        return null;
    }

    /** The share-partition, created on first use from persisted state or from the reset strategy. */
    private CompletableFuture<SharePartition> sharePartition(Partition partition, SharePartitionKey key) {
        Holder existing = holders.get(key);
        if (existing != null) {
            return existing.ready;
        }
        CompletableFuture<SharePartition> ready = new CompletableFuture<>();
        Holder created = new Holder(partition, ready);
        Holder raced = holders.putIfAbsent(key, created);
        if (raced != null) {
            return raced.ready;
        }
        stateKeys.add(key);
        partition.shard().execute(() -> {
            try {
                byShard.get(partition.shard().id()).add(created);
                ShareState stored = persister.read(key);
                if (stored != null && stored.startOffset() >= 0) {
                    ready.complete(SharePartition.load(key, stored, () -> groups.shareConfig(key.groupId()),
                            events.create(key, partition), clock.monoMs()));
                    return;
                }
                long start = initialStartOffset(partition.log(), key.groupId());
                // The first start offset must be durable before any record is handed out, or a
                // restart would pick a new one and silently skip or repeat the backlog.
                persister.initialize(key, start).whenComplete((v, t) -> {
                    if (t != null) {
                        holders.remove(key, created);
                        ready.completeExceptionally(t);
                    } else {
                        ShareState created0 = persister.read(key);
                        int epoch = created0 == null ? 0 : created0.stateEpoch();
                        ready.complete(SharePartition.fresh(key, epoch, start, () -> groups.shareConfig(key.groupId()),
                                events.create(key, partition)));
                    }
                }).exceptionally(t -> { // the callback itself threw: fail and forget, as below
                    holders.remove(key, created);
                    ready.completeExceptionally(Futures.unwrap(t));
                    return null;
                });
            } catch (Exception e) {
                holders.remove(key, created);
                ready.completeExceptionally(e);
            }
        });
        return ready;
    }

    /** A share-partition's start offset and lag as DescribeShareGroupOffsets reports them; -1 if unknown. */
    public record OffsetSummary(long startOffset, long lag) {
        public static final OffsetSummary NONE = new OffsetSummary(-1, -1);

        /** KIP-1226: lag = partition end offset - start offset - records delivered for good in flight. */
        static OffsetSummary of(long startOffset, long endOffset, long deliveryCompleteCount) {
            return new OffsetSummary(startOffset, Math.max(0, endOffset - startOffset - deliveryCompleteCount));
        }
    }

    /** The share-partitions of a group that have state, by topic id then partition. */
    public List<SharePartitionKey> stateKeys(String groupId) {
        List<SharePartitionKey> keys = new ArrayList<>();
        for (SharePartitionKey key : stateKeys) {
            if (key.groupId().equals(groupId)) {
                keys.add(key);
            }
        }
        keys.sort(Comparator.comparing(SharePartitionKey::topicId).thenComparingInt(SharePartitionKey::partition));
        return keys;
    }

    /**
     * Start offset and lag of one share-partition, read on the partition's shard: from the live
     * share-partition if loaded, else from the persisted state; {@link OffsetSummary#NONE} if the
     * group never fetched it.
     */
    public CompletableFuture<OffsetSummary> summary(Partition partition, SharePartitionKey key) {
        return partition.shard().call(() -> {
            long endOffset = partition.log().highWatermark();
            Holder holder = holders.get(key);
            SharePartition sp = holder == null ? null : holder.loaded();
            if (sp != null) {
                return OffsetSummary.of(sp.startOffset(), endOffset, sp.deliveryCompleteCount());
            }
            ShareState stored = persister.read(key);
            if (stored == null || stored.startOffset() < 0) {
                return OffsetSummary.NONE;
            }
            // A stored start offset lags by one write (each write carries the start offset as it
            // was before that write's own acknowledgements), so settled records right at the
            // start are skipped here as loading the share-partition would.
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
        });
    }

    /**
     * AlterShareGroupOffsets for one share-partition of an Empty group: forgets the in-memory
     * state and re-initialises the persisted one at {@code startOffset} (bumping its state
     * epoch, which fences writes of the forgotten state), so the next fetch loads it and starts
     * there.
     */
    public CompletableFuture<Void> reset(SharePartitionKey key, long startOffset) {
        return forget(key).thenCompose(v -> {
            stateKeys.add(key);
            return persister.initialize(key, startOffset);
        });
    }

    /** Drops a share-partition's state, in memory and persisted (DeleteShareGroupOffsets). */
    public CompletableFuture<Void> deleteState(SharePartitionKey key) {
        Holder loaded = holders.get(key);
        if (loaded != null) {
            events.forget(key, loaded.partition);
        }
        return forget(key).thenCompose(v -> {
            stateKeys.remove(key);
            return persister.delete(key);
        });
    }

    /** Drops the state of every share-partition of a group (DeleteGroups). */
    public CompletableFuture<Void> deleteGroupState(String groupId) {
        return CompletableFuture.allOf(stateKeys(groupId).stream()
                .map(this::deleteState)
                .toArray(CompletableFuture[]::new));
    }

    /** Removes the live share-partition, on its shard, so the next use loads or creates it again. */
    private CompletableFuture<Void> forget(SharePartitionKey key) {
        Holder holder = holders.get(key);
        if (holder == null) {
            return CompletableFuture.completedFuture(null);
        }
        Shard shard = holder.partition.shard();
        return shard.call(() -> {
            holders.remove(key, holder);
            byShard.get(shard.id()).remove(holder);
            return null;
        });
    }

    /** Shard thread only: each loaded share-partition {@code shard} owns, with its partition. */
    void forEachLoaded(Shard shard, BiConsumer<Partition, SharePartition> action) {
        for (Holder h : byShard.get(shard.id())) {
            SharePartition sp = h.loaded();
            if (sp != null) {
                action.accept(h.partition, sp);
            }
        }
    }

    private long initialStartOffset(PartitionLog log, String groupId) throws IOException {
        AutoOffsetReset reset = groups.config(groupId).effectiveAutoOffsetReset();
        switch (reset.strategy()) {
            case EARLIEST:
                return log.logStartOffset();
            case BY_DURATION:
                OffsetAndTimestamp found = log.offsetForTimestamp(clock.wallMs() - reset.duration().toMillis());
                return found == null ? log.highWatermark() : found.offset();
            case LATEST:
            default:
                return log.highWatermark();
        }
    }

    private void expireLocks(List<Holder> owned, long nowMs) {
        for (int i = 0; i < owned.size(); i++) {
            Holder h = owned.get(i);
            if (h.ready.isCompletedExceptionally()) {
                // Its state never loaded (the next fetch tries again with a new holder); left in
                // the list it would fail this ticker on every duty cycle.
                owned.remove(i--);
                continue;
            }
            SharePartition sp = h.loaded();
            if (sp == null || nowMs < sp.nextDeadlineMs()) {
                continue;
            }
            sp.expireLocks(nowMs).ifPresent(write -> persister.write(write).exceptionally(t -> {
                LOG.warn("Persisting lock expiry of {} failed; the expiry stands", sp.key(), t);
                return null;
            }));
            if (sp.consumeStateChanged()) {
                h.partition.fireDataListeners();
            }
        }
    }

    /** Lock duration the group's consumers are told about. */
    public int lockDurationMs(String groupId) {
        return (int) groups.shareConfig(groupId).lockDurationMs();
    }
}
