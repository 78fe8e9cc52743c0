package io.pier.state;

import io.pier.common.ClosableInbox;
import io.pier.common.Agent;
import io.pier.common.Clock;
import io.pier.common.Wakeup;
import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link SharePersister} that keeps share-partition state, and which share groups exist, in a
 * {@link ShareStateLog} (on a broker: {@link LocalShareStateLog}, Pier's own partition log in
 * DURABLE mode). It is an {@link Agent} with no thread of its own: whoever runs it (the broker's
 * {@code AgentRunner}, or a test by hand) calls {@link #doWork} with the time. Record format: see
 * {@link ShareStateRecords} (and {@code docs/share-state-format.md}).
 *
 * <pre>
 *   callers (any thread)                 doWork(nowMs), on the runner's thread
 *   write / initialize / delete  --&gt;     queue --&gt; take up to 4096 submissions
 *   recordGroup / deleteGroup            validate (initialised? state epoch fenced?) and merge
 *     (each submission wakes the runner)   (StateBatchCombiner) per key
 *                                        encode: ShareUpdate, or ShareSnapshot every N updates
 *                                        once nowMs reaches nextDeadlineMs(): snapshot cold keys
 *                                          too, ahead of the cycle's own records
 *                                        ShareStateLog: append, then ONE flush (group commit)
 *                                        publish the new states, complete the futures
 *                                        after a cold pass: move the log start to
 *                                          min(latest full record of each key)
 * </pre>
 *
 * <p><b>Threading.</b> Everything but two parts is owned by the thread that calls {@link #doWork}
 * (one at a time, never concurrently) and touched nowhere else: the log, the staging, the
 * {@link SnapshotPolicy}. The two parts other threads meet: the submission queue (a JDK concurrent
 * queue; each submission calls the injected {@link Wakeup}) and the published view, one immutable
 * {@link ShareState} per key in a concurrent map that only the duty cycle writes, after the flush.
 * So {@link #read}, {@link #keys} and {@link #groups} are safe from any thread and never show state
 * that is not durable. Futures complete on the duty-cycle thread (callers hop back to their own).
 * Time comes only from the {@code nowMs} handed to {@code doWork}; nothing here reads a clock,
 * sleeps or locks.
 *
 * <p><b>Failure.</b> An I/O error from the log is fatal (fsyncgate): every pending and later change
 * fails, the {@link FatalHandler} is told once, and nothing more is written. On the next start the
 * log's recovery drops a torn tail and refuses damage inside the synced region, naming where.
 *
 * <p><b>Recovery.</b> {@link #open} replays the log from its start offset: a snapshot replaces a
 * key's state, an update is merged into it, a null value deletes it (see {@link ShareStateReplay}).
 *
 * <p>This class runs the duty cycle and the group commit; when a key is written whole and how far
 * the log start may move is {@link SnapshotPolicy}'s decision, where the bytes go is the
 * {@link ShareStateLog}'s.
 */
public final class DurableSharePersister implements SharePersister, Agent, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DurableSharePersister.class);
    /** Submissions taken per duty cycle; the rest wait for the next cycle, which follows at once. */
    static final int MAX_SUBMISSIONS_PER_CYCLE = 4096;
    /** {@link #nextColdPassMs} before the first duty cycle has told the time. */
    private static final long NOT_STARTED = Long.MIN_VALUE;

    /**
     * @param updatesPerSnapshot {@code share.coordinator.snapshot.update.records.per.snapshot}:
     *     a key's state is written whole instead of as an update once it has this many updates
     * @param coldSnapshotIntervalMs {@code share.coordinator.cold.partition.snapshot.interval.ms}:
     *     how often keys without a recent snapshot are snapshotted so the log start can move on
     * @param segmentBytes segment size of the local state log; whole segments below the start are
     *     deleted
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

    /** What a caller submitted, with the future the duty cycle completes. */
    private sealed interface Op permits WriteOp, InitOp, DeleteOp, GroupOp, CompactOp {
        CompletableFuture<Void> done();
    }

    private record WriteOp(ShareStateWrite write, CompletableFuture<Void> done) implements Op {}

    private record InitOp(SharePartitionKey key, long startOffset, CompletableFuture<Void> done) implements Op {}

    private record DeleteOp(SharePartitionKey key, CompletableFuture<Void> done) implements Op {}

    private record GroupOp(String groupId, boolean exists, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    private final ShareStateLog log;
    private final Options options;
    private final Wakeup wakeup;
    private final FatalHandler fatal;
    // Met by other threads: submissions in, the published view out.
    private final ClosableInbox<Op> submitted = new ClosableInbox<>();
    private final Map<SharePartitionKey, ShareState> published = new ConcurrentHashMap<>();
    private final Set<String> publishedGroups = ConcurrentHashMap.newKeySet();
    private volatile Throwable failure;
    // Written only by the duty cycle, read by any thread (tests, benchmarks).
    private final AtomicLong recordsAppended = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    // Owned by the duty cycle.
    private final SnapshotPolicy snapshots;
    private final List<Op> taken = new ArrayList<>();
    private boolean inCycle;
    private long nextColdPassMs = NOT_STARTED;

    private DurableSharePersister(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal) {
        this.log = log;
        this.options = options;
        this.wakeup = wakeup;
        this.fatal = fatal;
        this.snapshots = new SnapshotPolicy(options.updatesPerSnapshot());
    }

    /**
     * Replays {@code log} and returns a persister over it, ready for its first duty cycle. On
     * failure the log is closed.
     *
     * @param wakeup called after every submission, from the submitting thread
     * @throws IOException if the log cannot be read or holds a record that does not decode (the
     *     message names the log and offset)
     */
    public static DurableSharePersister open(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal)
            throws IOException {
        DurableSharePersister p = new DurableSharePersister(log, options, wakeup, fatal);
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
        p.snapshots.startColdPassesAt(log.startOffset());
        return p;
    }

    /**
     * Opens (creating if needed) a {@link LocalShareStateLog} in {@code dir} and replays it.
     *
     * @param clock for the local log only (record timestamps, its recovery bookkeeping)
     * @throws IOException if the log cannot be read, is damaged inside its synced region, or holds
     *     a record that does not decode (the message names the file and offset)
     */
    public static DurableSharePersister open(Path dir, Options options, Clock clock, FileIO io, Wakeup wakeup,
            FatalHandler fatal) throws IOException {
        return open(LocalShareStateLog.open(dir, options.segmentBytes(), clock, io), options, wakeup, fatal);
    }

    // ---------------------------------------------------------------- SharePersister, any thread

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        return submit(new WriteOp(write, new CompletableFuture<>()));
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        return published.get(key);
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        return submit(new InitOp(key, startOffset, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        return submit(new DeleteOp(key, new CompletableFuture<>()));
    }

    /** Makes the existence of a share group durable; completes at once if it already is. */
    public CompletableFuture<Void> recordGroup(String groupId) {
        if (publishedGroups.contains(groupId)) {
            return CompletableFuture.completedFuture(null);
        }
        return submit(new GroupOp(groupId, true, new CompletableFuture<>()));
    }

    /** Makes the deletion of a share group durable. */
    public CompletableFuture<Void> deleteGroup(String groupId) {
        return submit(new GroupOp(groupId, false, new CompletableFuture<>()));
    }

    /** Runs a cold pass in the next duty cycle, whatever the time; for tests and measurements. */
    public CompletableFuture<Void> compactNow() {
        return submit(new CompactOp(new CompletableFuture<>()));
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

    /** Records appended since open. */
    public long recordsAppended() {
        return recordsAppended.get();
    }

    /** Group commits (flushes of the state log) since open. */
    public long flushes() {
        return flushes.get();
    }

    /** The state log's start offset (advances as superseded records are cleaned away). */
    public long logStartOffset() {
        return log.startOffset();
    }

    private CompletableFuture<Void> submit(Op op) {
        Throwable f = failure;
        if (f != null) {
            op.done().completeExceptionally(new IOException("share state is not writable after an I/O error", f));
        } else if (!submitted.offer(op)) {
            op.done().completeExceptionally(new IOException("share-state persister is closed"));
        } else {
            wakeup.wake();
        }
        return op.done();
    }

    // ---------------------------------------------------------------- Agent, the duty-cycle thread

    @Override
    public String roleName() {
        return "pier-share-state";
    }

    @Override
    public int doWork(long nowMs) {
        if (submitted.isClosed()) {
            return 0;
        }
        if (nextColdPassMs == NOT_STARTED) {
            nextColdPassMs = deadlineAfter(nowMs);
        }
        int work = cycle(nowMs >= nextColdPassMs);
        if (nowMs >= nextColdPassMs) {
            nextColdPassMs = deadlineAfter(nowMs);
        }
        return work;
    }

    /** The next cold pass; none once the log failed or the persister closed. */
    @Override
    public long nextDeadlineMs() {
        return failure != null || submitted.isClosed() || nextColdPassMs == NOT_STARTED ? Long.MAX_VALUE : nextColdPassMs;
    }

    private long deadlineAfter(long nowMs) {
        long interval = options.coldSnapshotIntervalMs();
        return nowMs > Long.MAX_VALUE - interval ? Long.MAX_VALUE : nowMs + interval;
    }

    /**
     * Takes a bounded batch of submissions, writes them (after the cold snapshots, if a cold pass
     * is due or was asked for) with one flush, completes them, then lets the log start move on.
     * Returns the submissions taken, plus one for a cold pass.
     */
    private int cycle(boolean coldPassDue) {
        inCycle = true;
        for (Op op; taken.size() < MAX_SUBMISSIONS_PER_CYCLE && (op = submitted.poll()) != null; ) {
            taken.add(op);
        }
        List<Op> changes = new ArrayList<>(taken.size());
        List<CompactOp> compactions = new ArrayList<>();
        for (Op op : taken) {
            if (op instanceof CompactOp c) {
                compactions.add(c);
            } else {
                changes.add(op);
            }
        }
        int work = taken.size();
        if (failure != null) {
            failAll(taken, failure);
        } else {
            boolean coldPass = coldPassDue || !compactions.isEmpty();
            commit(changes, coldPass);
            work += coldPass ? 1 : 0;
            for (CompactOp c : compactions) {
                if (failure == null) {
                    c.done().complete(null);
                } else {
                    c.done().completeExceptionally(new IOException("share-state log failed", failure));
                }
            }
        }
        taken.clear();
        inCycle = false;
        return work;
    }

    /**
     * Validates and merges the changes, appends their records after the cold pass's snapshots,
     * flushes once, publishes, completes the futures; then, for a cold pass, moves the log start.
     * The cold snapshots come first because they hold the published (pre-cycle) state: a change of
     * the same key in this cycle must land after them to win on replay.
     */
    private void commit(List<Op> ops, boolean coldPass) {
        long passEnd = log.endOffset();
        List<ShareStateChanges.Staged> records = coldPass && log.reclaimable() ? coldSnapshots() : new ArrayList<>();
        ShareStateChanges changes = new ShareStateChanges(published, publishedGroups, snapshots);
        List<CompletableFuture<Void>> succeeded = new ArrayList<>();
        for (Op op : ops) {
            RuntimeException refused = stage(op, changes);
            if (refused != null) {
                op.done().completeExceptionally(refused);
            } else {
                succeeded.add(op.done());
            }
        }
        records.addAll(changes.records());
        if (!records.isEmpty() && !appendAndFlush(records)) {
            for (CompletableFuture<Void> f : succeeded) {
                f.completeExceptionally(new IOException("share state could not be made durable", failure));
            }
            return;
        }
        changes.publish();
        for (CompletableFuture<Void> f : succeeded) {
            f.complete(null);
        }
        if (coldPass) {
            moveStartAfterColdPass(passEnd);
        }
    }

    /** Returns why the op was refused, or null once it is staged (or needs no record at all). */
    private static RuntimeException stage(Op op, ShareStateChanges changes) {
        if (op instanceof WriteOp w) {
            return changes.write(w.write());
        } else if (op instanceof InitOp i) {
            changes.initialize(i.key(), i.startOffset());
        } else if (op instanceof DeleteOp d) {
            changes.delete(d.key());
        } else if (op instanceof GroupOp g) {
            changes.group(g.groupId(), g.exists());
        }
        return null;
    }

    /** Appends the records and flushes once; false (and the persister failed) on any error. */
    private boolean appendAndFlush(List<ShareStateChanges.Staged> records) {
        try {
            List<ShareStateLog.Entry> entries = new ArrayList<>(records.size());
            for (ShareStateChanges.Staged p : records) {
                entries.add(p.entry());
            }
            long first = log.append(entries);
            recordsAppended.addAndGet(entries.size());
            for (int i = 0; i < records.size(); i++) {
                note(records.get(i), first + i);
            }
            log.flush();
            flushes.incrementAndGet();
            return true;
        } catch (IOException | RuntimeException e) {
            onFailure(e);
            return false;
        }
    }

    private void note(ShareStateChanges.Staged p, long offset) {
        if (p.entry().value() == null) {
            snapshots.onDeleted(p.infoKey());
        } else if (p.full()) {
            snapshots.onFullRecord(p.infoKey(), offset);
        } else {
            snapshots.onUpdate(p.infoKey());
        }
    }

    /**
     * A cold pass's records: a snapshot of every key whose last full record is older than the end
     * the previous pass saw (only asked for when moving the log start could free anything).
     */
    private List<ShareStateChanges.Staged> coldSnapshots() {
        List<ShareStateChanges.Staged> records = new ArrayList<>();
        for (Object key : snapshots.coldKeys()) {
            if (key instanceof SharePartitionKey spk) {
                ShareState s = published.get(spk);
                if (s != null) {
                    records.add(ShareStateChanges.Staged.snapshot(spk, s));
                }
            } else if (key instanceof String group) {
                records.add(ShareStateChanges.Staged.groupExists(group));
            }
        }
        return records;
    }

    /**
     * Ends a cold pass that saw the log up to {@code passEnd}, then moves the log start to the
     * oldest full record still needed, which frees the storage wholly below it.
     */
    private void moveStartAfterColdPass(long passEnd) {
        snapshots.endColdPass(passEnd);
        // Every append so far was flushed in its own cycle, so the log end is the durable end.
        long needed = snapshots.neededFrom(log.endOffset());
        try {
            if (needed > log.startOffset()) {
                log.moveStart(needed);
            }
        } catch (IOException | RuntimeException e) {
            onFailure(e);
        }
    }

    private void onFailure(Throwable e) {
        if (failure == null) {
            failure = e;
            LOG.error("Share-state log {} failed; no further share state is written", log.name(), e);
            fatal.onFatal("writing the share-state log failed", e);
        }
    }

    private static void failAll(List<? extends Op> ops, Throwable cause) {
        for (Op op : ops) {
            op.done().completeExceptionally(new IOException("share state is not writable after an I/O error", cause));
        }
    }

    /** Called by the runner on the duty-cycle thread after the last cycle: see {@link #close}. */
    @Override
    public void onClose() {
        close();
    }

    /**
     * Writes what was submitted before the close (unless the log failed), fails what comes later,
     * then closes the log. Call it where {@link #doWork} runs, once no cycle runs any more: the
     * runner does so through {@link #onClose}, a test that drives the cycles by hand calls it
     * directly. Idempotent.
     */
    @Override
    public void close() {
        if (submitted.isClosed()) {
            return;
        }
        submitted.close();
        if (inCycle) {
            // The last cycle threw half-way (a broken invariant): what it took is in doubt.
            if (failure == null) {
                failure = new IllegalStateException("a share-state duty cycle did not finish");
            }
            failAll(taken, failure);
            taken.clear();
        }
        // Bounded: once closed, a submitter whose op is not drained here takes it back.
        while (!submitted.isEmpty()) {
            cycle(false);
        }
        try {
            log.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing the share-state log {} failed", log.name(), e);
        }
    }
}
