package io.pier.service;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.ApiKeys;

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
 * <p>An attempt may also cut the wait short ({@link Wake#answerWithin}) when waiting cannot help:
 * a share fetch whose partition only its own member can unblock, with an acknowledgement its
 * client sends after this answer.
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
        CompletableFuture<R> attempt(boolean last, Wake wake);
    }

    /** How a poll came to be answered. */
    public enum Outcome {
        /** By its first attempt, without waiting. */
        AT_ONCE("at_once"),
        /** By an attempt after a partition changed. */
        WOKEN("woken"),
        /** By the last attempt, at MaxWaitMs. */
        MAX_WAIT("max_wait"),
        /** By the last attempt, at a deadline an attempt moved earlier ({@link Wake#answerWithin}). */
        CUT_SHORT("cut_short");

        private final String label;

        Outcome(String label) {
            this.label = label;
        }

        /** The metric label. */
        public String label() {
            return label;
        }
    }

    /** Told, on the home shard, how each poll was answered (metrics); a failed poll is not told. */
    @FunctionalInterface
    public interface Answers {
        Answers NONE = (api, outcome) -> { };

        void onAnswer(ApiKeys api, Outcome outcome);
    }

    /** A poll's wake-up, registered on partitions by its attempts. */
    public interface Wake extends Partition.DataListener {
        /**
         * From any thread: the last attempt comes at the latest {@code ms} after the home shard
         * sees this, instead of at MaxWaitMs; never later than MaxWaitMs.
         */
        void answerWithin(long ms);
    }

    private final Shard home;
    private final ApiKeys api;
    private final long maxWaitMs;
    private final Answers answers;
    private final Attempt<R> attempt;
    private final CompletableFuture<R> response = new CompletableFuture<>();
    private final Wake wake = new Wake() {
        @Override
        public boolean isDone() {
            return response.isDone();
        }

        @Override
        public void onDataChange() {
            home.execute(LongPoll.this::onWake);
        }

        @Override
        public void answerWithin(long ms) {
            home.execute(() -> shortenWait(ms));
        }
    };
    private long deadlineMs = -1;
    private boolean shortened;
    private boolean running;
    private int attempts;
    private int wakeups;
    private Deadlines.Timer timeout;

    private LongPoll(Shard home, ApiKeys api, long maxWaitMs, Answers answers, Attempt<R> attempt) {
        this.home = home;
        this.api = api;
        this.maxWaitMs = Math.max(0, maxWaitMs);
        this.answers = answers;
        this.attempt = attempt;
    }

    /** Starts a poll on {@code home}; the future completes with its answer. */
    static <R> CompletableFuture<R> start(Shard home, long maxWaitMs, Attempt<R> attempt) {
        return start(home, ApiKeys.FETCH, maxWaitMs, Answers.NONE, attempt);
    }

    /** As {@link #start(Shard, long, Attempt)}, telling {@code answers} how a poll of {@code api} was answered. */
    static <R> CompletableFuture<R> start(Shard home, ApiKeys api, long maxWaitMs, Answers answers,
            Attempt<R> attempt) {
        LongPoll<R> poll = new LongPoll<>(home, api, maxWaitMs, answers, attempt);
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
        attempts++;
        wakeups = 0;
        CompletableFuture<R> tried;
        try {
            tried = attempt.attempt(last, last ? null : wake);
        } catch (RuntimeException e) {
            tried = CompletableFuture.failedFuture(e);
        }
        tried.whenComplete((answer, failure) -> {
            // An answer goes out at once, from whichever thread completed the attempt: the response
            // future is the one thing here that is safe to touch off the home shard. The rest of
            // the bookkeeping (the timer) follows on the home shard, off the reply's path.
            if (failure == null && answer != null) {
                response.complete(answer);
            }
            home.execute(() -> afterAttempt(last, answer, failure));
        }).exceptionally(Futures.failing(response)); // the home shard stopped: the broker is closing
    }

    /**
     * Home shard only: moves the deadline earlier. If the attempt that asked is still running, its
     * end arms the timer at the new deadline; a timer already armed is re-armed.
     */
    private void shortenWait(long ms) {
        long deadline = home.nowMs() + Math.max(0, ms);
        if (response.isDone() || deadline >= deadlineMs) {
            return;
        }
        deadlineMs = deadline;
        shortened = true;
        if (timeout != null) {
            timeout.cancel();
            timeout = home.schedule(deadlineMs, this::onWake);
        }
    }

    private void afterAttempt(boolean last, R answer, Throwable failure) {
        running = false;
        if (failure != null) {
            response.completeExceptionally(failure);
        } else if (answer != null) {
            response.complete(answer);
            answers.onAnswer(api, attempts == 1 ? Outcome.AT_ONCE
                    : !last ? Outcome.WOKEN : shortened ? Outcome.CUT_SHORT : Outcome.MAX_WAIT);
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
