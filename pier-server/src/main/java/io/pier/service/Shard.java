package io.pier.service;

import io.pier.common.Agent;
import io.pier.common.Wakeup;
import io.pier.log.PartitionLog;
import io.pier.runtime.CommandQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One single-threaded owner of a disjoint set of partitions, their logs and share-partitions, and
 * the group coordinators whose ids hash to it. Other threads only put commands on its queues.
 *
 * <pre>
 *   event loops, metadata thread ──▶ command queue: bounded lane, a full one makes the
 *                                     submitter wait, so its connections stop being read
 *   other shards, the persister, ──▶ command queue: unbounded lane, an agent never waits
 *   this shard's flusher
 *                                          │
 *   doWork(nowMs):  1. run a bounded batch of commands from both queues, among them the
 *                      flusher's completions: the logs' high watermarks move, and the callbacks
 *                      that waited for those flushes run (produce replies, wake-ups)
 *                   2. run the timers that are due (long-poll MaxWaitMs, ...)
 *                   3. run the duty steps in order (lock expiry, session expiry, retention, metrics)
 *                   4. hand each log appended to (and not already being flushed) to the flusher:
 *                      one fsync covers all its appends so far (pipelined group commit)
 * </pre>
 *
 * <p>The fsync never runs here: while the {@link Flusher} forces a log, this shard goes on serving
 * every other partition, and the same one's readers up to its old high watermark. See
 * {@link GroupCommit}.
 *
 * <p>Time comes only from the {@code nowMs} of the current cycle ({@link #nowMs()}); nothing here
 * reads a clock. Tests construct a shard with {@link Wakeup#NONE} and call {@link #doWork}
 * themselves: no threads, time moved by hand.
 */
public final class Shard implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(Shard.class);
    private static final int MAX_COMMANDS_PER_CYCLE = 4096;
    /** Room for commands from outside the agents; past it, submitters wait. */
    static final int QUEUE_CAPACITY = 16 * 1024;

    private final int id;
    private final CommandQueue commands;
    private final Deadlines timers = new Deadlines();
    private final List<DutyStep> steps = new ArrayList<>();
    private final GroupCommit groupCommit;
    private final FatalErrorHandler fatal;
    private final List<Runnable> closeHooks = new ArrayList<>();
    private long nowMs;

    /** Told when a flush fails: the broker must stop acknowledging rather than carry on. */
    public interface FatalErrorHandler {
        void onFatal(String what, Throwable cause);
    }

    /** Waits for a log to be durable; told exactly once, on the shard thread. */
    public interface FlushWaiter {
        /** Everything appended before the wait began is on disk (or the mode asks no more). */
        void onDurable();

        /** It is not known to be on disk, and never will be acknowledged as such. */
        void onNotDurable(Errors error, String message);
    }

    /**
     * A shard that forces its logs on its own thread: for tests that drive a shard without a
     * flusher.
     *
     * @param wakeup how a new command wakes the thread that runs this shard ({@link Wakeup#NONE}
     *     when a test drives it)
     */
    public Shard(int id, Wakeup wakeup, FatalErrorHandler fatal) {
        this(id, wakeup, fatal, null);
    }

    /**
     * @param flusher forces this shard's logs; null to force them on the shard's own thread
     */
    public Shard(int id, Wakeup wakeup, FatalErrorHandler fatal, Flusher flusher) {
        this.id = id;
        this.commands = new CommandQueue(QUEUE_CAPACITY, wakeup);
        this.groupCommit = new GroupCommit(flusher, this::execute, fatal);
        this.fatal = fatal;
    }

    /**
     * A write to the data folder failed (a full disk, an I/O error): like a failed fsync, the broker
     * stops acknowledging and shuts down, as Kafka does when its only log directory fails, rather
     * than go on with some partitions or stores refusing writes. What was acknowledged is on disk;
     * a restart once the disk is usable again cuts any half-written tail.
     */
    public void onStorageError(String what, Throwable cause) {
        fatal.onFatal(what, cause);
    }

    public int id() {
        return id;
    }

    @Override
    public String roleName() {
        return "pier-shard-" + id;
    }

    /**
     * Adds a step to every duty cycle, after the commands and timers, in the order added. Only while
     * wiring, before the shard runs.
     */
    public void addStep(DutyStep step) {
        steps.add(step);
    }

    /** Shard thread only: the monotonic time of the current duty cycle. */
    public long nowMs() {
        return nowMs;
    }

    /**
     * From any thread: runs {@code command} on this shard, in a later duty cycle. From outside the
     * agents this may wait while the shard's queue is full (see {@link CommandQueue}).
     */
    public void execute(Runnable command) {
        try {
            commands.offer(command);
        } catch (IllegalStateException e) {
            throw new IllegalStateException("shard " + id + " is not taking commands: " + e.getMessage(), e);
        }
    }

    /** From any thread: {@code work}'s result, computed on this shard. */
    public <T> CompletableFuture<T> call(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /**
     * From any thread: runs {@code work} on this shard and completes with the future it returns,
     * whenever and wherever that completes (a coordinator's answer that waits for a write).
     */
    public <T> CompletableFuture<T> compose(Supplier<CompletableFuture<T>> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            execute(() -> {
                try {
                    Futures.forward(work.get(), result);
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** Shard thread only: runs {@code task} in the first duty cycle at or after {@code deadlineMs}. */
    public Deadlines.Timer schedule(long deadlineMs, Runnable task) {
        return timers.schedule(deadlineMs, task);
    }

    /**
     * Shard thread only: tells {@code waiter} once everything appended to {@code log} so far is
     * flushed, or that it will not be. Not before a later duty cycle has processed the flusher's
     * completion (under {@code durability=none}: at the end of this cycle).
     */
    public void afterFlush(PartitionLog log, FlushWaiter waiter) {
        groupCommit.await(log, waiter);
    }

    /**
     * Shard thread only: {@code log}'s partition is deleted. Waiters whose flush has not begun
     * fail; {@code then} runs once the flush in flight, if any, is back (at once if none), so the
     * flusher no longer writes in the log's folder.
     */
    void retire(PartitionLog log, Runnable then) {
        groupCommit.retire(log, then);
    }

    @Override
    public int doWork(long nowMs) {
        this.nowMs = nowMs;
        int work = drain();
        work += timers.fire(nowMs, this::runSafely);
        for (int i = 0; i < steps.size(); i++) {
            try {
                work += steps.get(i).onCycle(nowMs);
            } catch (RuntimeException e) {
                LOG.error("shard {} duty step {} failed", id, steps.get(i), e);
            }
        }
        return work + groupCommit.handOff();
    }

    @Override
    public long nextDeadlineMs() {
        if (!commands.isEmpty() || groupCommit.hasReady()) {
            return nowMs;
        }
        long next = timers.nextDeadlineMs();
        for (int i = 0; i < steps.size(); i++) {
            next = Math.min(next, steps.get(i).nextDeadlineMs());
        }
        return next;
    }

    private int drain() {
        int n = 0;
        Runnable r;
        while (n < MAX_COMMANDS_PER_CYCLE && (r = commands.poll()) != null) {
            runSafely(r);
            n++;
        }
        return n;
    }

    private void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("shard {} command failed", id, e);
        }
    }

    /** Runs once the shard has stopped, after the commands still queued (closing its logs). */
    void addCloseHook(Runnable hook) {
        closeHooks.add(hook);
    }

    /**
     * After the last duty cycle: no command is taken any more; those already queued still run
     * (among them the completions of a flusher that stopped first, as a broker stops them), and
     * what they appended is forced here, on this thread, before it is acknowledged. A flush still
     * with a flusher that has not stopped can no longer be heard of: what waits on it fails
     * instead of being acknowledged.
     */
    @Override
    public void onClose() {
        commands.close();
        for (int i = 0; i < 64 && drain() > 0; i++) {
            groupCommit.flushHere();
        }
        groupCommit.flushHere();
        groupCommit.abandon();
        closeHooks.forEach(this::runSafely);
    }
}
