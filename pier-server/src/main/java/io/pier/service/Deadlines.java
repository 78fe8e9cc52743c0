package io.pier.service;

import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * A shard's own timers, ordered by deadline: long-poll MaxWaitMs and the like. Owned by one shard
 * thread, so nothing here is thread-safe; there is no timer thread anywhere in the broker.
 */
public final class Deadlines {
    private final PriorityQueue<Timer> queue = new PriorityQueue<>();
    private long sequence;

    /** One scheduled task; cancelling it is cheap (it is skipped when due). */
    public static final class Timer implements Comparable<Timer> {
        private final long deadlineMs;
        private final long order;
        private final Runnable task;
        private boolean cancelled;

        private Timer(long deadlineMs, long order, Runnable task) {
            this.deadlineMs = deadlineMs;
            this.order = order;
            this.task = task;
        }

        public void cancel() {
            cancelled = true;
        }

        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(deadlineMs, o.deadlineMs);
            return c != 0 ? c : Long.compare(order, o.order);
        }
    }

    Timer schedule(long deadlineMs, Runnable task) {
        Timer t = new Timer(deadlineMs, sequence++, task);
        queue.add(t);
        return t;
    }

    /** Runs every timer due at {@code nowMs}, in deadline order; returns how many ran. */
    int fire(long nowMs, Consumer<Runnable> runner) {
        int fired = 0;
        while (!queue.isEmpty() && queue.peek().deadlineMs <= nowMs) {
            Timer t = queue.poll();
            if (!t.cancelled) {
                runner.accept(t.task);
                fired++;
            }
        }
        return fired;
    }

    long nextDeadlineMs() {
        while (!queue.isEmpty() && queue.peek().cancelled) {
            queue.poll();
        }
        return queue.isEmpty() ? Long.MAX_VALUE : queue.peek().deadlineMs;
    }
}
