package io.pier.service;

import java.util.concurrent.CompletableFuture;

/**
 * A request that may wait for data (Fetch below MinBytes, ShareFetch with nothing acquirable),
 * until it is answered: try, park on the partitions that had nothing, try again when one of them
 * changes or MaxWaitMs passes. One mechanism for both APIs.
 *
 * <p>All of a poll's state belongs to its home shard: wake-ups from the partitions' shards and the
 * MaxWaitMs timer arrive there as commands, so nothing here needs a lock or an atomic. Attempts
 * never overlap: a wake-up during an attempt is counted and served by one more attempt after it.
 * Overlapping share attempts could each acquire records while only one can answer, stranding the
 * other's records until their locks expire; and a dropped wake-up would let a parked fetch outlive
 * its MaxWaitMs.
 *
 * @param <R> the response
 */
public final class LongPoll<R> {
    /** One try at answering. */
    @FunctionalInterface
    public interface Attempt<R> {
        /**
         * @param last the deadline has passed: answer with whatever there is
         * @param wake to register on each partition that had nothing to give; null when {@code last}
         * @return the answer, or a future of null to keep waiting (never null when {@code last})
         */
        CompletableFuture<R> attempt(boolean last, Partition.DataListener wake);
    }

    private final Shard home;
    private final long maxWaitMs;
    private final Attempt<R> attempt;
    private final CompletableFuture<R> response = new CompletableFuture<>();
    private final Partition.DataListener wake = new Partition.DataListener() {
        @Override
        public boolean isDone() {
            return response.isDone();
        }

        @Override
        public void onDataChange() {
            home.execute(LongPoll.this::onWake);
        }
    };
    private long deadlineMs = -1;
    private boolean running;
    private int wakeups;
    private Deadlines.Timer timeout;

    private LongPoll(Shard home, long maxWaitMs, Attempt<R> attempt) {
        this.home = home;
        this.maxWaitMs = Math.max(0, maxWaitMs);
        this.attempt = attempt;
    }

    /** Starts a poll on {@code home}; the future completes with its answer. */
    static <R> CompletableFuture<R> start(Shard home, long maxWaitMs, Attempt<R> attempt) {
        LongPoll<R> poll = new LongPoll<>(home, maxWaitMs, attempt);
        home.execute(poll::onWake);
        return poll.response;
    }

    private void onWake() {
        wakeups++;
        drain();
    }

    private void drain() {
        if (response.isDone() || running) {
            return; // answered, or the running attempt looks at the wake-ups when it ends
        }
        long nowMs = home.nowMs();
        if (deadlineMs < 0) {
            deadlineMs = nowMs + maxWaitMs;
        }
        boolean last = nowMs >= deadlineMs;
        running = true;
        wakeups = 0;
        CompletableFuture<R> tried;
        try {
            tried = attempt.attempt(last, last ? null : wake);
        } catch (RuntimeException e) {
            tried = CompletableFuture.failedFuture(e);
        }
        // If the home shard no longer takes commands (the broker stops), the response fails.
        tried.whenComplete((answer, failure) -> home.execute(() -> afterAttempt(last, answer, failure)))
                .exceptionally(Futures.failing(response));
    }

    private void afterAttempt(boolean last, R answer, Throwable failure) {
        running = false;
        if (failure != null) {
            response.completeExceptionally(failure);
        } else if (answer != null) {
            response.complete(answer);
        } else if (last) {
            response.completeExceptionally(new IllegalStateException("a last attempt gave no answer"));
        }
        if (response.isDone()) {
            if (timeout != null) {
                timeout.cancel();
            }
            return;
        }
        if (timeout == null) {
            timeout = home.schedule(deadlineMs, this::onWake);
        }
        if (wakeups > 0) {
            drain();
        }
    }
}
