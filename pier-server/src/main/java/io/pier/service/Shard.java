package io.pier.service;

import io.pier.common.Agent;
import io.pier.common.Wakeup;
import io.pier.log.PartitionLog;
import io.pier.runtime.CommandQueue;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One single-threaded owner of a disjoint set of partitions, their logs and share-partitions, and
 * the group coordinators whose ids hash to it. Other threads only put commands on its queues.
 *
 * <pre>
 *   event loops, metadata thread ──▶ command queue: bounded lane, a full one makes the
 *                                     submitter wait, so its connections stop being read
 *   other shards, the persister  ──▶ command queue: unbounded lane, an agent never waits
 *                                          │
 *   doWork(nowMs):  1. run a bounded batch of commands from both queues
 *                   2. run the timers that are due (long-poll MaxWaitMs, ...)
 *                   3. run the duty steps in order (lock expiry, session expiry, retention, metrics)
 *                   4. flush every log appended to this cycle, one fsync each (group commit),
 *                      then the callbacks that waited for it (produce replies, wake-ups)
 * </pre>
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
    private final FatalErrorHandler fatal;
    private final CommandQueue commands;
    private final Deadlines timers = new Deadlines();
    private final List<DutyStep> steps = new ArrayList<>();
    private final Map<PartitionLog, List<Runnable>> awaitingFlush = new IdentityHashMap<>();
    private final List<Runnable> closeHooks = new ArrayList<>();
    private long nowMs;

    /** Told when a flush fails: the broker must stop acknowledging rather than carry on. */
    public interface FatalErrorHandler {
        void onFatal(String what, Throwable cause);
    }

    /**
     * @param wakeup how a new command wakes the thread that runs this shard ({@link Wakeup#NONE}
     *     when a test drives it)
     */
    public Shard(int id, Wakeup wakeup, FatalErrorHandler fatal) {
        this.id = id;
        this.commands = new CommandQueue(QUEUE_CAPACITY, wakeup);
        this.fatal = fatal;
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

    /** Shard thread only: runs {@code task} in the first duty cycle at or after {@code deadlineMs}. */
    public Deadlines.Timer schedule(long deadlineMs, Runnable task) {
        return timers.schedule(deadlineMs, task);
    }

    /** Shard thread only: run {@code onDurable} once everything appended to {@code log} so far is flushed. */
    public void afterFlush(PartitionLog log, Runnable onDurable) {
        awaitingFlush.computeIfAbsent(log, l -> new ArrayList<>()).add(onDurable);
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
        return work + flushAppended();
    }

    @Override
    public long nextDeadlineMs() {
        if (!commands.isEmpty() || !awaitingFlush.isEmpty()) {
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

    private int flushAppended() {
        if (awaitingFlush.isEmpty()) {
            return 0;
        }
        List<Map.Entry<PartitionLog, List<Runnable>>> flushed = new ArrayList<>(awaitingFlush.entrySet());
        awaitingFlush.clear();
        for (Map.Entry<PartitionLog, List<Runnable>> e : flushed) {
            try {
                e.getKey().flush();
            } catch (IOException | RuntimeException ex) {
                // fsyncgate: the page cache may already have dropped the data; never retry and
                // never acknowledge. The broker halts and recovers from disk on restart.
                fatal.onFatal("flush of a partition log failed", ex);
                return flushed.size();
            }
            for (Runnable r : e.getValue()) {
                runSafely(r);
            }
        }
        return flushed.size();
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
     * After the last duty cycle: no command is taken any more; those already queued still run, and
     * what they appended is flushed, so nothing acknowledged is dropped on a clean stop.
     */
    @Override
    public void onClose() {
        commands.close();
        for (int i = 0; i < 64 && drain() > 0; i++) {
            flushAppended();
        }
        flushAppended();
        closeHooks.forEach(this::runSafely);
    }
}
