package io.pier.state;

import io.pier.common.Clock;
import io.pier.log.CrashPoint;
import io.pier.log.Durability;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link SharePersister} that keeps share-partition state, and which share groups exist, in an
 * internal log written with Pier's own {@link PartitionLog} in {@link Durability#DURABLE} mode.
 * Record format: see {@link ShareStateRecords} (and {@code docs/share-state-format.md}).
 *
 * <pre>
 *   callers (shard threads)            writer thread "pier-share-state"
 *   write / initialize / delete  --&gt;   queue --&gt; drain all that arrived
 *   recordGroup / deleteGroup              validate + merge (StateBatchCombiner) per key
 *                                         encode: ShareUpdate, or ShareSnapshot every N updates
 *                                         append one record batch, ONE fsync (group commit)
 *                                         publish the new states, complete the futures
 *                                         every cold interval: snapshot cold keys, then move the
 *                                         log start to min(latest snapshot offset of each key)
 * </pre>
 *
 * <p><b>Threading.</b> One writer thread owns the log and all bookkeeping; callers only enqueue.
 * Futures complete on the writer thread once the change is fsynced (callers hop back to their own
 * thread). {@link #read} and {@link #groups} read an immutable per-key view published after each
 * fsync, so they are safe from any thread and never show state that is not durable.
 *
 * <p><b>Failure.</b> An I/O error while appending or forcing is fatal (fsyncgate): every pending
 * and later change fails, the {@link FatalHandler} is told once, and nothing more is written. On
 * the next start the log recovery drops a torn tail and refuses damage inside the synced region,
 * naming the file and position.
 *
 * <p><b>Recovery.</b> {@link #open} replays the log from its start offset: a snapshot replaces a
 * key's state, an update is merged into it, a null value deletes it (see {@link ShareStateReplay}).
 *
 * <p>This class runs the writer loop and the group commit; when a key is written whole and how far
 * the log start may move is {@link SnapshotPolicy}'s decision.
 */
public final class DurableSharePersister implements SharePersister, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DurableSharePersister.class);
    /** Records of one append stay below this, well under the log's max.message.bytes. */
    private static final int MAX_BATCH_BYTES = 512 * 1024;
    private static final int MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

    /**
     * @param updatesPerSnapshot {@code share.coordinator.snapshot.update.records.per.snapshot}:
     *     a key's state is written whole instead of as an update once it has this many updates
     * @param coldSnapshotIntervalMs {@code share.coordinator.cold.partition.snapshot.interval.ms}:
     *     how often keys without a recent snapshot are snapshotted so the log start can move on
     * @param segmentBytes segment size of the state log; whole segments below the start are deleted
     */
    public record Options(int updatesPerSnapshot, long coldSnapshotIntervalMs, long segmentBytes) {
        public static final Options DEFAULTS = new Options(500, 300_000, 16L * 1024 * 1024);

        public Options {
            if (updatesPerSnapshot < 1 || coldSnapshotIntervalMs < 1 || segmentBytes < 1024) {
                throw new IllegalArgumentException("bad share-state options");
            }
        }

        /** Reads the Kafka names, falling back to {@link #DEFAULTS}. */
        public static Options fromProperties(Map<String, String> props) {
            return new Options(
                    Integer.parseInt(props.getOrDefault("share.coordinator.snapshot.update.records.per.snapshot",
                            String.valueOf(DEFAULTS.updatesPerSnapshot))),
                    Long.parseLong(props.getOrDefault("share.coordinator.cold.partition.snapshot.interval.ms",
                            String.valueOf(DEFAULTS.coldSnapshotIntervalMs))),
                    Long.parseLong(props.getOrDefault("pier.share.state.segment.bytes",
                            String.valueOf(DEFAULTS.segmentBytes))));
        }
    }

    /** Told once when the state log cannot be written or forced; the owner must stop. */
    public interface FatalHandler {
        void onFatal(String what, Throwable cause);
    }

    private sealed interface Op permits WriteOp, InitOp, DeleteOp, GroupOp, CompactOp, StopOp {}

    private record WriteOp(ShareStateWrite write, CompletableFuture<Void> done) implements Op {}

    private record InitOp(SharePartitionKey key, long startOffset, CompletableFuture<Void> done) implements Op {}

    private record DeleteOp(SharePartitionKey key, CompletableFuture<Void> done) implements Op {}

    private record GroupOp(String groupId, boolean exists, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    private record StopOp() implements Op {}

    /** One record to append, and what to do with the key's bookkeeping once it has an offset. */
    private record Pending(Object infoKey, boolean full, byte[] key, byte[] value) {}

    private final PartitionLog log;
    private final Options options;
    private final Clock clock;
    private final FileIO io;
    private final FatalHandler fatal;
    private final Map<SharePartitionKey, ShareState> published = new ConcurrentHashMap<>();
    private final Set<String> publishedGroups = ConcurrentHashMap.newKeySet();
    private final BlockingQueue<Op> queue = new LinkedBlockingQueue<>();
    private final AtomicLong bytesAppended = new AtomicLong();
    private final AtomicLong recordsAppended = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    // Writer-thread state.
    private final SnapshotPolicy snapshots;
    private long nextColdPassMs;
    private volatile Throwable failure;
    private volatile boolean stopping;
    private final Thread writer;

    private DurableSharePersister(PartitionLog log, Options options, Clock clock, FileIO io, FatalHandler fatal) {
        this.log = log;
        this.options = options;
        this.clock = clock;
        this.io = io;
        this.fatal = fatal;
        this.snapshots = new SnapshotPolicy(options.updatesPerSnapshot());
        this.writer = new Thread(this::run, "pier-share-state");
        this.writer.setDaemon(true);
    }

    /**
     * Opens (creating if needed) the state log in {@code dir}, replays it and starts the writer.
     *
     * @throws IOException if the log cannot be read, is damaged inside its synced region, or holds
     *     a record that does not decode (the message names the file and offset)
     */
    public static DurableSharePersister open(Path dir, Options options, Clock clock, FileIO io, FatalHandler fatal)
            throws IOException {
        LogConfig config = new LogConfig(options.segmentBytes(), Long.MAX_VALUE, -1, -1, MAX_MESSAGE_BYTES,
                4096, false, Durability.DURABLE);
        PartitionLog log = PartitionLog.open(dir, config, clock, io);
        DurableSharePersister p = new DurableSharePersister(log, options, clock, io, fatal);
        try {
            ShareStateReplay.replay(log, p.published, p.publishedGroups, p.snapshots);
        } catch (IOException | RuntimeException e) {
            try {
                log.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        p.snapshots.startColdPassesAt(log.logStartOffset());
        p.nextColdPassMs = clock.monoMs() + options.coldSnapshotIntervalMs();
        p.writer.start();
        return p;
    }

    // ---------------------------------------------------------------- SharePersister

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        return enqueue(new WriteOp(write, new CompletableFuture<>()));
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        return published.get(key);
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        return enqueue(new InitOp(key, startOffset, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        return enqueue(new DeleteOp(key, new CompletableFuture<>()));
    }

    /** Makes the existence of a share group durable; completes at once if it already is. */
    public CompletableFuture<Void> recordGroup(String groupId) {
        if (publishedGroups.contains(groupId)) {
            return CompletableFuture.completedFuture(null);
        }
        return enqueue(new GroupOp(groupId, true, new CompletableFuture<>()));
    }

    /** Makes the deletion of a share group durable. */
    public CompletableFuture<Void> deleteGroup(String groupId) {
        return enqueue(new GroupOp(groupId, false, new CompletableFuture<>()));
    }

    /** The share groups whose existence is durable. */
    public Set<String> groups() {
        return Collections.unmodifiableSet(publishedGroups);
    }

    @Override
    public Set<SharePartitionKey> keys() {
        return Set.copyOf(published.keySet());
    }

    /** Every share-partition with durable state (a copy). */
    public Map<SharePartitionKey, ShareState> states() {
        return Map.copyOf(published);
    }

    /** Bytes of record batches appended to the state log since open. */
    public long bytesAppended() {
        return bytesAppended.get();
    }

    /** Records appended since open. */
    public long recordsAppended() {
        return recordsAppended.get();
    }

    /** Group commits (fsyncs of the state log) since open. */
    public long flushes() {
        return flushes.get();
    }

    /** The state log's start offset (advances as superseded records are cleaned away). */
    public long logStartOffset() {
        return log.logStartOffset();
    }

    private CompletableFuture<Void> enqueue(Op op) {
        CompletableFuture<Void> done = doneOf(op);
        Throwable f = failure;
        if (f != null) {
            done.completeExceptionally(new IOException("share state is not writable after an I/O error", f));
        } else if (stopping) {
            done.completeExceptionally(new IOException("share-state persister is closed"));
        } else {
            queue.add(op);
        }
        return done;
    }

    private static CompletableFuture<Void> doneOf(Op op) {
        if (op instanceof WriteOp w) {
            return w.done();
        } else if (op instanceof InitOp i) {
            return i.done();
        } else if (op instanceof DeleteOp d) {
            return d.done();
        } else if (op instanceof GroupOp g) {
            return g.done();
        } else if (op instanceof CompactOp c) {
            return c.done();
        }
        return new CompletableFuture<>();
    }

    // ---------------------------------------------------------------- writer thread

    private void run() {
        List<Op> batch = new ArrayList<>();
        boolean stop = false;
        while (!stop) {
            try {
                long waitMs = Math.max(1, nextColdPassMs - clock.monoMs());
                Op first = queue.poll(waitMs, TimeUnit.MILLISECONDS);
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stop = true;
            }
            List<Op> work = new ArrayList<>(batch.size());
            List<CompactOp> compactions = new ArrayList<>();
            for (Op op : batch) {
                if (op instanceof StopOp) {
                    stop = true;
                } else if (op instanceof CompactOp c) {
                    compactions.add(c);
                } else {
                    work.add(op);
                }
            }
            batch.clear();
            if (!work.isEmpty()) {
                process(work);
            }
            if (failure == null && (!compactions.isEmpty() || (!stop && clock.monoMs() >= nextColdPassMs))) {
                coldPass();
                nextColdPassMs = clock.monoMs() + options.coldSnapshotIntervalMs();
            }
            for (CompactOp c : compactions) {
                if (failure == null) {
                    c.done().complete(null);
                } else {
                    c.done().completeExceptionally(new IOException("share-state log failed", failure));
                }
            }
        }
        // Whatever is still queued after a stop fails; its callers were not told of success.
        List<Op> rest = new ArrayList<>();
        queue.drainTo(rest);
        for (Op op : rest) {
            doneOf(op).completeExceptionally(new IOException("share-state persister is closed"));
        }
    }

    /** Validates, merges, encodes, appends, fsyncs once, publishes, then completes the futures. */
    private void process(List<Op> ops) {
        if (failure != null) {
            failAll(ops, failure);
            return;
        }
        Map<SharePartitionKey, ShareState> staged = new HashMap<>();
        Map<String, Boolean> stagedGroups = new HashMap<>();
        List<Pending> records = new ArrayList<>();
        List<CompletableFuture<Void>> succeeded = new ArrayList<>();
        for (Op op : ops) {
            RuntimeException refused = stage(op, staged, stagedGroups, records);
            if (refused != null) {
                doneOf(op).completeExceptionally(refused);
            } else {
                succeeded.add(doneOf(op));
            }
        }
        if (!records.isEmpty() && !appendAndFlush(records)) {
            for (CompletableFuture<Void> f : succeeded) {
                f.completeExceptionally(new IOException("share state could not be made durable", failure));
            }
            return;
        }
        staged.forEach((k, v) -> {
            if (v == null) {
                published.remove(k);
            } else {
                published.put(k, v);
            }
        });
        stagedGroups.forEach((g, exists) -> {
            if (exists) {
                publishedGroups.add(g);
            } else {
                publishedGroups.remove(g);
            }
        });
        for (CompletableFuture<Void> f : succeeded) {
            f.complete(null);
        }
    }

    /** Applies one op to the staged view and queues its record; returns why it was refused, if it was. */
    private RuntimeException stage(Op op, Map<SharePartitionKey, ShareState> staged, Map<String, Boolean> stagedGroups,
            List<Pending> records) {
        if (op instanceof WriteOp w) {
            ShareStateWrite write = w.write();
            SharePartitionKey key = write.key();
            ShareState current = staged.containsKey(key) ? staged.get(key) : published.get(key);
            if (current == null) {
                return new IllegalStateException("share state not initialised: " + key.coordinatorKey());
            }
            if (write.stateEpoch() < current.stateEpoch()) {
                return new IllegalStateException("fenced state epoch " + write.stateEpoch() + " < "
                        + current.stateEpoch() + " for " + key.coordinatorKey());
            }
            ShareState next = current.merged(write.stateEpoch(), write.startOffset(), write.batches());
            staged.put(key, next);
            if (snapshots.snapshotDue(key)) {
                records.add(snapshotRecord(key, next));
            } else {
                records.add(new Pending(key, false, ShareStateRecords.shareKey(ShareStateRecords.UPDATE, key),
                        ShareStateRecords.stateValue(next.stateEpoch(), next.startOffset(), write.batches())));
            }
        } else if (op instanceof InitOp i) {
            ShareState current = staged.containsKey(i.key()) ? staged.get(i.key()) : published.get(i.key());
            ShareState next = new ShareState(current == null ? 0 : current.stateEpoch() + 1, i.startOffset(), List.of());
            staged.put(i.key(), next);
            records.add(snapshotRecord(i.key(), next));
        } else if (op instanceof DeleteOp d) {
            staged.put(d.key(), null);
            records.add(new Pending(d.key(), false, ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, d.key()),
                    null));
        } else if (op instanceof GroupOp g) {
            boolean known = stagedGroups.containsKey(g.groupId()) ? stagedGroups.get(g.groupId())
                    : publishedGroups.contains(g.groupId());
            if (known == g.exists()) {
                return null; // nothing to change; completes with the others once they are durable
            }
            stagedGroups.put(g.groupId(), g.exists());
            records.add(new Pending(g.groupId(), g.exists(), ShareStateRecords.groupKey(g.groupId()),
                    g.exists() ? ShareStateRecords.groupValue() : null));
        }
        return null;
    }

    private static Pending snapshotRecord(SharePartitionKey key, ShareState state) {
        return new Pending(key, true, ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key),
                ShareStateRecords.stateValue(state.stateEpoch(), state.startOffset(), state.batches()));
    }

    /** Appends the records in batches of at most {@link #MAX_BATCH_BYTES} and forces once. */
    private boolean appendAndFlush(List<Pending> records) {
        try {
            long now = clock.wallMs();
            boolean snapshots = false;
            int from = 0;
            while (from < records.size()) {
                int size = 0;
                int to = from;
                while (to < records.size() && (to == from || size < MAX_BATCH_BYTES)) {
                    Pending p = records.get(to++);
                    size += p.key().length + (p.value() == null ? 0 : p.value().length) + 16;
                }
                SimpleRecord[] batch = new SimpleRecord[to - from];
                for (int i = from; i < to; i++) {
                    Pending p = records.get(i);
                    batch[i - from] = new SimpleRecord(now, p.key(), p.value());
                    snapshots |= p.full();
                }
                MemoryRecords mr = MemoryRecords.withRecords(Compression.NONE, batch);
                int bytes = mr.sizeInBytes();
                long base = log.append(mr).baseOffset();
                bytesAppended.addAndGet(bytes);
                recordsAppended.addAndGet(batch.length);
                for (int i = from; i < to; i++) {
                    note(records.get(i), base + (i - from));
                }
                from = to;
                if (snapshots && from < records.size()) {
                    io.crashPoint(CrashPoint.MID_SNAPSHOT);
                }
            }
            log.flush();
            flushes.incrementAndGet();
            return true;
        } catch (IOException | RuntimeException e) {
            onFailure(e);
            return false;
        }
    }

    private void note(Pending p, long offset) {
        if (p.value() == null) {
            snapshots.onDeleted(p.infoKey());
        } else if (p.full()) {
            snapshots.onFullRecord(p.infoKey(), offset);
        } else {
            snapshots.onUpdate(p.infoKey());
        }
    }

    /**
     * Snapshots every key whose last full record is older than the previous pass (when the log
     * has segments that could go), then moves the log start to the oldest full record still
     * needed, which deletes the segments wholly below it.
     */
    private void coldPass() {
        long end = log.logEndOffset();
        if (log.segmentCount() > 1) {
            List<Pending> records = new ArrayList<>();
            for (Object key : snapshots.coldKeys()) {
                if (key instanceof SharePartitionKey spk) {
                    ShareState s = published.get(spk);
                    if (s != null) {
                        records.add(snapshotRecord(spk, s));
                    }
                } else if (key instanceof String group) {
                    records.add(new Pending(group, true, ShareStateRecords.groupKey(group),
                            ShareStateRecords.groupValue()));
                }
            }
            if (!records.isEmpty() && !appendAndFlush(records)) {
                return;
            }
        }
        snapshots.endColdPass(end);
        long needed = snapshots.neededFrom(log.highWatermark());
        try {
            if (needed > log.logStartOffset()) {
                log.deleteRecordsBefore(needed);
            }
        } catch (IOException | RuntimeException e) {
            onFailure(e);
        }
    }

    /** Runs one cold pass now, on the writer thread; for tests and measurements. */
    public CompletableFuture<Void> compactNow() {
        return enqueue(new CompactOp(new CompletableFuture<>()));
    }

    private void onFailure(Throwable e) {
        if (failure == null) {
            failure = e;
            LOG.error("Share-state log {} failed; no further share state is written", log.dir(), e);
            fatal.onFatal("writing the share-state log failed", e);
        }
    }

    private static void failAll(List<Op> ops, Throwable cause) {
        for (Op op : ops) {
            doneOf(op).completeExceptionally(new IOException("share state is not writable after an I/O error", cause));
        }
    }

    /** Stops the writer after what is queued, then closes the log (forcing it, unless it failed). */
    @Override
    public void close() {
        if (!stopping) {
            stopping = true;
            queue.add(new StopOp());
        }
        try {
            writer.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            log.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing the share-state log {} failed", log.dir(), e);
        }
    }
}
