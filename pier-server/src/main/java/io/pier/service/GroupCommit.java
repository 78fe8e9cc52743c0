package io.pier.service;

import io.pier.log.LogFlush;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shard-owned: what waits for a partition log to be durable (produce replies, and through them
 * the long polls they wake), and the one flush of each log that is with the shard's
 * {@link Flusher}. A pipelined group commit:
 *
 * <pre>
 *   afterFlush(log, w) ──▶ next ──end of the cycle: beginFlush, hand off──▶ flushing ──completion──▶ w.onDurable()
 *                            ▲        (at most one flush in flight per log)                 │ completeFlush on the shard
 *                            └── appends during the flight wait here for the next one ◀─────┘
 * </pre>
 *
 * <p>A waiter hears {@code onDurable} only after the shard has processed a completion saying the
 * force that covered its append returned; otherwise {@code onNotDurable}, never both. Under
 * {@code durability=none} {@code beginFlush} has nothing to force and waiters run at the end of
 * the cycle, with no flusher work.
 */
final class GroupCommit {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommit.class);

    private final Flusher flusher;
    private final Executor shard;
    private final Shard.FatalErrorHandler fatal;
    private final Map<PartitionLog, Commits> byLog = new IdentityHashMap<>();
    /** Logs with waiters for a flush not yet begun, in the order they first had one. */
    private final List<Commits> ready = new ArrayList<>();

    /** One log's waiters and flush in flight; gone from {@link #byLog} once nothing waits. */
    private static final class Commits {
        final PartitionLog log;
        LogFlush inFlight;
        List<Shard.FlushWaiter> flushing = new ArrayList<>();
        List<Shard.FlushWaiter> next = new ArrayList<>();
        boolean queued;
        /** Set once the log is deleted: what runs when the flush in flight is back. */
        List<Runnable> afterSettled;

        Commits(PartitionLog log) {
            this.log = log;
        }
    }

    /**
     * @param flusher forces the logs; null to force them on the shard's thread
     * @param shard the shard's command queue, where a flusher's completions go
     */
    GroupCommit(Flusher flusher, Executor shard, Shard.FatalErrorHandler fatal) {
        this.flusher = flusher;
        this.shard = shard;
        this.fatal = fatal;
    }

    /** {@code waiter} hears whether everything appended to {@code log} so far became durable. */
    void await(PartitionLog log, Shard.FlushWaiter waiter) {
        Commits c = byLog.computeIfAbsent(log, Commits::new);
        if (c.afterSettled != null) {
            notDurable(List.of(waiter), Errors.UNKNOWN_TOPIC_OR_PARTITION, "the partition was deleted");
            return;
        }
        c.next.add(waiter);
        enqueue(c);
    }

    /** True when a flush is waiting to begin: the shard needs another cycle at once. */
    boolean hasReady() {
        return !ready.isEmpty();
    }

    /** End of the shard's cycle: begins a flush of each log that has waiters and none in flight. */
    int handOff() {
        return startReady(false);
    }

    /** As {@link #handOff}, forcing on this thread: for a stopping shard, which serves nothing else. */
    int flushHere() {
        return startReady(true);
    }

    private int startReady(boolean here) {
        if (ready.isEmpty()) {
            return 0;
        }
        List<Commits> now = new ArrayList<>(ready);
        ready.clear();
        for (Commits c : now) {
            c.queued = false;
            start(c, here);
        }
        return now.size();
    }

    private void enqueue(Commits c) {
        if (!c.queued && c.inFlight == null) {
            c.queued = true;
            ready.add(c);
        }
    }

    private void start(Commits c, boolean here) {
        if (c.inFlight != null || c.next.isEmpty()) {
            return;
        }
        List<Shard.FlushWaiter> waiting = c.next;
        c.next = new ArrayList<>();
        LogFlush flush;
        try {
            flush = c.log.beginFlush();
        } catch (IOException e) {
            fatal.onFatal("flush of a partition log failed", e);
            notDurable(waiting, Errors.KAFKA_STORAGE_ERROR, e.getMessage());
            settle(c);
            return;
        } catch (RuntimeException e) {
            notDurable(waiting, Errors.NOT_LEADER_OR_FOLLOWER, e.getMessage()); // the log was closed
            settle(c);
            return;
        }
        if (flush == null) {
            durable(waiting); // nothing to force: already as durable as the mode makes it
            settle(c);
            return;
        }
        c.inFlight = flush;
        c.flushing = waiting;
        if (here || flusher == null
                || !flusher.submit(flush, forced -> shard.execute(() -> onForced(c, flush, forced)))) {
            onForced(c, flush, flush.force());
        }
    }

    /** Shard thread: the force of {@code flush} returned {@code forced}. */
    private void onForced(Commits c, LogFlush flush, LogFlush.Forced forced) {
        if (c.inFlight != flush) {
            return; // given up when the shard stopped; its waiters have been told
        }
        c.inFlight = null;
        List<Shard.FlushWaiter> covered = c.flushing;
        c.flushing = new ArrayList<>();
        try {
            c.log.completeFlush(flush, forced);
        } catch (IOException e) {
            // fsyncgate: the page cache may already have dropped the data; never retry and never
            // acknowledge. The broker halts and recovers from disk on restart.
            fatal.onFatal("flush of a partition log failed", e);
            notDurable(covered, Errors.KAFKA_STORAGE_ERROR, e.getMessage());
            notDurable(c.next, Errors.KAFKA_STORAGE_ERROR, e.getMessage());
            c.next = new ArrayList<>();
            settle(c);
            return;
        } catch (RuntimeException e) {
            notDurable(covered, Errors.NOT_LEADER_OR_FOLLOWER, e.getMessage()); // closed meanwhile
            notDurable(c.next, Errors.NOT_LEADER_OR_FOLLOWER, e.getMessage());
            c.next = new ArrayList<>();
            settle(c);
            return;
        }
        durable(covered);
        if (c.next.isEmpty()) {
            settle(c);
        } else {
            enqueue(c); // appended during the flight: the next flush, at the end of this cycle
        }
    }

    /**
     * The log's partition is deleted: waiters whose flush has not begun fail now, no flush begins
     * any more, and {@code then} runs once the flush in flight (if any) is back, so nothing still
     * writes in the log's folder when it goes.
     */
    void retire(PartitionLog log, Runnable then) {
        Commits c = byLog.get(log);
        if (c == null) {
            then.run();
            return;
        }
        notDurable(c.next, Errors.UNKNOWN_TOPIC_OR_PARTITION, "the partition was deleted");
        c.next = new ArrayList<>();
        if (c.queued) {
            c.queued = false;
            ready.remove(c);
        }
        if (c.afterSettled == null) {
            c.afterSettled = new ArrayList<>();
        }
        c.afterSettled.add(then);
        settle(c);
    }

    /**
     * The shard has stopped: a flush still with the flusher will never be heard of. Its waiters,
     * and those behind it, fail (not acknowledged: the force may not have run), and what waited
     * for it to settle runs.
     */
    void abandon() {
        for (Commits c : List.copyOf(byLog.values())) {
            if (c.inFlight != null || !c.next.isEmpty()) {
                LOG.warn("Stopped before the flush of {} was confirmed; {} replies waiting for it fail", c.log,
                        c.flushing.size() + c.next.size());
                c.inFlight = null;
                notDurable(c.flushing, Errors.NOT_LEADER_OR_FOLLOWER, "the broker stopped before the write was fsynced");
                notDurable(c.next, Errors.NOT_LEADER_OR_FOLLOWER, "the broker stopped before the write was fsynced");
                c.flushing = new ArrayList<>();
                c.next = new ArrayList<>();
            }
            settle(c);
        }
    }

    /** Drops the log's entry once nothing is in flight or waiting, running what waited for that. */
    private void settle(Commits c) {
        if (c.inFlight != null || !c.next.isEmpty()) {
            return;
        }
        byLog.remove(c.log, c);
        if (c.afterSettled != null) {
            List<Runnable> then = c.afterSettled;
            c.afterSettled = List.of();
            for (Runnable r : then) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    LOG.error("After the last flush of {}", c.log, e);
                }
            }
        }
    }

    private static void durable(List<Shard.FlushWaiter> waiters) {
        for (Shard.FlushWaiter w : waiters) {
            try {
                w.onDurable();
            } catch (RuntimeException e) {
                LOG.error("A callback after a flush failed", e);
            }
        }
    }

    private static void notDurable(List<Shard.FlushWaiter> waiters, Errors error, String message) {
        for (Shard.FlushWaiter w : waiters) {
            try {
                w.onNotDurable(error, message);
            } catch (RuntimeException e) {
                LOG.error("A callback after a failed flush failed", e);
            }
        }
    }
}
