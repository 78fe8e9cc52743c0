package io.pier.state;

import io.pier.common.Agent;
import io.pier.common.ClosableInbox;
import io.pier.common.Wakeup;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent of a durable store over a {@link ShareStateLog}: the duty cycle, group commit, failure
 * and close that {@link DurableSharePersister} and {@link DurableOffsetStore} share. A store
 * extends it with what is its own: what its submissions and records mean ({@link #stage},
 * {@link #entry}, {@link #appended}), what a compaction pass rewrites ({@link #rewrite}), its
 * published view and its replay. A base class rather than a helper each store holds, because the
 * store itself is the {@link Agent} its runner drives: a helper would leave both stores forwarding
 * the same Agent methods to it.
 *
 * <pre>
 *   submit (any thread) --&gt; inbox --&gt; doWork(nowMs): take up to 4096 submissions
 *                                     failed before? fail them all, write nothing
 *                                     a compaction pass due (its interval, or a submission
 *                                       asked for one) and the log reclaimable: every cold key
 *                                       rewritten whole, first
 *                                     then the store's staged records
 *                                     append once, flush ONCE (group commit)
 *                                     durable: the store publishes and completes
 *                                     after a pass: move the log start as far as the
 *                                       {@link SnapshotPolicy} allows
 * </pre>
 *
 * <p><b>Invariants.</b> A change is published (and its future completed) only after the flush
 * that covered it returned, so readers never see what is not durable. A pass's rewritten keys go
 * ahead of the cycle's own records because they hold the published (pre-cycle) values: a change of
 * the same key in the cycle lands after them and wins on replay. Every append is flushed in its own
 * cycle, so the log end is the durable end when a pass moves the start.
 *
 * <p><b>Threading.</b> {@link #submit} and the counters are safe from any thread; everything else
 * runs on the thread that runs the duty cycles (one at a time), or on the opening thread before the
 * first one. Time comes only from the {@code nowMs} handed to {@link #doWork}; nothing here reads a
 * clock, sleeps or locks.
 *
 * <p><b>Failure.</b> An error from the log is fatal (fsyncgate): the fatal handler is told once,
 * the cycle's changes fail, and every later one fails without a record written. A cycle that throws
 * (a broken invariant) leaves what it took in doubt; {@link #close} fails it.
 *
 * @param <O> what callers submit
 * @param <R> a record the store staged, before it is encoded
 */
abstract class DurableStoreAgent<O extends DurableStoreAgent.Submission, R> implements Agent, AutoCloseable {
    /** Submissions taken per duty cycle; the rest wait for the next cycle, which follows at once. */
    static final int MAX_SUBMISSIONS_PER_CYCLE = 4096;
    /** {@link #nextPassMs} before the first duty cycle has told the time. */
    private static final long NOT_STARTED = Long.MIN_VALUE;

    /** Something a caller submitted, with the future the duty cycle completes. */
    interface Submission {
        CompletableFuture<Void> done();
    }

    /** One cycle's staged changes, not visible to readers yet. */
    interface Staging<R> {
        /** The records to append (after the pass's, if any), in order. */
        List<R> records();

        /** The records are durable: publish the changes, complete their futures. */
        void durable();

        /** The records could not be made durable ({@code cause}): fail the changes. */
        void notDurable(Throwable cause);

        /** Last, after the pass if there was one; {@code failure} is null unless the store failed. */
        default void ended(Throwable failure) {}
    }

    /** A store's replay of its log, run by {@link #recover}. */
    @FunctionalInterface
    interface Replay {
        void run() throws IOException;
    }

    /**
     * What a store's errors and log lines call it.
     *
     * @param log the log, as in "writing the {@code log} log failed"
     * @param notWritable why a change fails after a failure
     * @param closed why a change fails after the close
     * @param stopped what the error line says stops with a failure
     */
    record Wording(String log, String notWritable, String closed, String stopped) {}

    private final ShareStateLog log;
    private final SnapshotPolicy policy;
    private final long passIntervalMs;
    private final Wakeup wakeup;
    private final BiConsumer<String, Throwable> fatal;
    private final Wording wording;
    /** The store's own logger (named after its class), so its lines read as they always did. */
    private final Logger logger = LoggerFactory.getLogger(getClass());
    // Met by other threads: submissions in, the failure out.
    private final ClosableInbox<O> submitted = new ClosableInbox<>();
    private volatile Throwable failure;
    // Written only by the duty cycle, read by any thread (tests, benchmarks).
    private final AtomicLong recordsAppended = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    // Owned by the duty cycle.
    private final List<O> taken = new ArrayList<>();
    private boolean inCycle;
    private long nextPassMs = NOT_STARTED;
    /** When the log wants a flush with nothing new ({@link ShareStateLog#syncWithinMs}); MAX_VALUE: never. */
    private long syncDueMs = Long.MAX_VALUE;

    /**
     * @param policy where each key's latest full record is; the store feeds it, the passes read it
     * @param passIntervalMs how often a compaction pass runs
     * @param wakeup called after every submission, from the submitting thread
     * @param fatal told once when the log fails: what failed, and why
     */
    DurableStoreAgent(ShareStateLog log, SnapshotPolicy policy, long passIntervalMs, Wakeup wakeup,
            BiConsumer<String, Throwable> fatal, Wording wording) {
        this.log = log;
        this.policy = policy;
        this.passIntervalMs = passIntervalMs;
        this.wakeup = wakeup;
        this.fatal = fatal;
        this.wording = wording;
    }

    // ---------------------------------------------------------------- what the store adds

    /** True if {@code op} asks for a compaction pass in its cycle, whatever the time. */
    abstract boolean forcesPass(O op);

    /**
     * A compaction pass's record for {@code coldKey} (a key of the {@link SnapshotPolicy}): its
     * published value written whole, or null if it has none any more.
     */
    abstract R rewrite(Object coldKey);

    /** Stages the cycle's submissions over the published view. */
    abstract Staging<R> stage(List<O> ops);

    /** {@code record} as the log stores it. */
    abstract ShareStateLog.Entry entry(R record);

    /** {@code record} was appended at {@code offset}: the {@link SnapshotPolicy}'s bookkeeping. */
    abstract void appended(R record, long offset);

    // ---------------------------------------------------------------- for the store

    /** The policy the store keeps up to date as it replays and appends records. */
    final SnapshotPolicy policy() {
        return policy;
    }

    /**
     * Runs the store's replay on the opening thread, then counts compaction passes from the log
     * start. On failure the log is closed.
     */
    final void recover(Replay replay) throws IOException {
        try {
            replay.run();
        } catch (IOException | RuntimeException e) {
            try {
                log.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        policy.startColdPassesAt(log.startOffset());
    }

    /** Any thread: queues {@code op} and wakes the runner, or fails it at once after a failure or the close. */
    final CompletableFuture<Void> submit(O op) {
        Throwable f = failure;
        if (f != null) {
            op.done().completeExceptionally(new IOException(wording.notWritable(), f));
        } else if (!submitted.offer(op)) {
            op.done().completeExceptionally(new IOException(wording.closed()));
        } else {
            wakeup.wake();
        }
        return op.done();
    }

    /** Fails every submission the current cycle took. */
    final void failTaken(Throwable cause) {
        for (O op : taken) {
            op.done().completeExceptionally(new IOException(wording.notWritable(), cause));
        }
    }

    /** Group commits (flushes of the log) since open. */
    final long flushCount() {
        return flushes.get();
    }

    // ---------------------------------------------------------------- any thread

    /** Records appended since open. */
    public final long recordsAppended() {
        return recordsAppended.get();
    }

    /** The log's start offset (moves on as compaction passes free old segments). */
    public final long logStartOffset() {
        return log.startOffset();
    }

    // ---------------------------------------------------------------- Agent, the duty-cycle thread

    /** Returns the submissions taken, plus one for a compaction pass. */
    @Override
    public final int doWork(long nowMs) {
        if (submitted.isClosed()) {
            return 0;
        }
        if (nextPassMs == NOT_STARTED) {
            nextPassMs = deadlineAfter(nowMs);
        }
        boolean due = nowMs >= nextPassMs;
        long flushesBefore = flushes.get();
        int work = cycle(due);
        if (due) {
            nextPassMs = deadlineAfter(nowMs);
        }
        if (flushes.get() != flushesBefore) {
            long within = log.syncWithinMs();
            syncDueMs = within == Long.MAX_VALUE || nowMs > Long.MAX_VALUE - within ? Long.MAX_VALUE : nowMs + within;
        } else if (nowMs >= syncDueMs) {
            sync();
            work++;
        }
        return work;
    }

    /** A flush with nothing appended, which finishes what the last one left open; once a failure, nothing. */
    private void sync() {
        syncDueMs = Long.MAX_VALUE;
        if (failure != null) {
            return;
        }
        try {
            log.flush();
        } catch (IOException | RuntimeException e) {
            onFailure(e);
        }
    }

    /** The next compaction pass or sync of the log; none once the log failed or the store closed. */
    @Override
    public final long nextDeadlineMs() {
        return failure != null || submitted.isClosed() || nextPassMs == NOT_STARTED ? Long.MAX_VALUE
                : Math.min(nextPassMs, syncDueMs);
    }

    private long deadlineAfter(long nowMs) {
        return nowMs > Long.MAX_VALUE - passIntervalMs ? Long.MAX_VALUE : nowMs + passIntervalMs;
    }

    private int cycle(boolean passDue) {
        inCycle = true;
        for (O op; taken.size() < MAX_SUBMISSIONS_PER_CYCLE && (op = submitted.poll()) != null; ) {
            taken.add(op);
        }
        int work = taken.size();
        if (failure != null) {
            failTaken(failure);
        } else {
            boolean pass = passDue || taken.stream().anyMatch(this::forcesPass);
            commit(pass);
            work += pass ? 1 : 0;
        }
        taken.clear();
        inCycle = false;
        return work;
    }

    /** Writes the pass's records (if any) and the taken submissions' with one flush. */
    private void commit(boolean pass) {
        long passEnd = log.endOffset();
        List<R> records = new ArrayList<>();
        if (pass && log.reclaimable()) {
            for (Object key : policy.coldKeys()) {
                R r = rewrite(key);
                if (r != null) {
                    records.add(r);
                }
            }
        }
        Staging<R> staged = stage(taken);
        records.addAll(staged.records());
        if (!records.isEmpty() && !appendAndFlush(records)) {
            staged.notDurable(failure);
        } else {
            staged.durable();
            if (pass) {
                moveStartAfterPass(passEnd);
            }
        }
        staged.ended(failure);
    }

    /** Appends the records and flushes once; false (and the store failed) on any error. */
    private boolean appendAndFlush(List<R> records) {
        try {
            List<ShareStateLog.Entry> entries = new ArrayList<>(records.size());
            for (R r : records) {
                entries.add(entry(r));
            }
            long first = log.append(entries);
            recordsAppended.addAndGet(entries.size());
            for (int i = 0; i < records.size(); i++) {
                appended(records.get(i), first + i);
            }
            log.flush();
            flushes.incrementAndGet();
            return true;
        } catch (IOException | RuntimeException e) {
            onFailure(e);
            return false;
        }
    }

    /**
     * Ends a pass that saw the log up to {@code passEnd}, then moves the log start to the oldest
     * record still needed, which frees the storage wholly below it.
     */
    private void moveStartAfterPass(long passEnd) {
        policy.endColdPass(passEnd);
        // Every append so far was flushed in its own cycle, so the log end is the durable end.
        long needed = policy.neededFrom(log.endOffset());
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
            logger.error(capitalized(wording.log()) + " log {} failed; " + wording.stopped(), log.name(), e);
            fatal.accept("writing the " + wording.log() + " log failed", e);
        }
    }

    private static String capitalized(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** Called by the runner on the duty-cycle thread after the last cycle: see {@link #close}. */
    @Override
    public final void onClose() {
        close();
    }

    /**
     * Writes what was submitted before the close (unless the log failed), fails what comes later,
     * then closes the log. Call it where {@link #doWork} runs, once no cycle runs any more: the
     * runner does so through {@link #onClose}, a test that drives the cycles by hand calls it
     * directly. Idempotent.
     */
    @Override
    public final void close() {
        if (submitted.isClosed()) {
            return;
        }
        submitted.close();
        if (inCycle) {
            // The last cycle threw half-way (a broken invariant): what it took is in doubt.
            if (failure == null) {
                failure = new IllegalStateException("a " + wording.log() + " duty cycle did not finish");
            }
            failTaken(failure);
            taken.clear();
        }
        // Bounded: once closed, a submitter whose op is not drained here takes it back.
        while (!submitted.isEmpty()) {
            cycle(false);
        }
        try {
            log.close();
        } catch (RuntimeException e) {
            logger.warn("Closing the " + wording.log() + " log {} failed", log.name(), e);
        }
    }
}
