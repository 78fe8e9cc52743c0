package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/**
 * The one long-poll mechanism, on two shards driven by hand: the poll's home and the shard whose
 * partition wakes it. MaxWaitMs passes on the manual clock; nothing here sleeps.
 */
class LongPollTest {
    private final ManualClock clock = new ManualClock(5_000_000);
    private final Shard home = new Shard(0, Wakeup.NONE, (what, cause) -> { });
    private final Shard other = new Shard(1, Wakeup.NONE, (what, cause) -> { });
    private final List<Boolean> attempts = new ArrayList<>();
    private final List<Partition.DataListener> parked = new ArrayList<>();

    /** Answers only when {@code ready} holds or the wait is over; parks its wake-up otherwise. */
    private LongPoll.Attempt<String> attempt(boolean[] ready) {
        return (last, wake) -> {
            attempts.add(last);
            if (ready[0] || last) {
                return CompletableFuture.completedFuture(last ? "timed out" : "data");
            }
            parked.add(wake);
            return CompletableFuture.completedFuture(null);
        };
    }

    private void cycle() {
        for (int i = 0; i < 4; i++) {
            home.doWork(clock.monoMs());
            other.doWork(clock.monoMs());
        }
    }

    @Test
    void shouldAnswerWithTheLastAttemptWhenMaxWaitPassesOnTheClock() {
        CompletableFuture<String> response = LongPoll.start(home, 30_000, attempt(new boolean[] {false}));
        cycle();
        assertThat(response).isNotDone();
        assertThat(home.nextDeadlineMs()).isEqualTo(clock.monoMs() + 30_000);

        clock.advance(29_999);
        cycle();
        assertThat(response).isNotDone();

        clock.advance(1);
        cycle();
        assertThat(response).isCompletedWithValue("timed out");
        assertThat(attempts).containsExactly(false, true);
    }

    @Test
    void shouldTryAgainOnTheHomeShardWhenAPartitionOnAnotherShardWakesIt() {
        boolean[] ready = {false};
        CompletableFuture<String> response = LongPoll.start(home, 30_000, attempt(ready));
        cycle();
        assertThat(parked).hasSize(1);

        ready[0] = true;
        other.execute(() -> parked.get(0).onDataChange());
        cycle();

        assertThat(response).isCompletedWithValue("data");
        assertThat(attempts).containsExactly(false, false);
        assertThat(parked.get(0).isDone()).isTrue();
        assertThat(home.nextDeadlineMs()).as("the MaxWaitMs timer is cancelled").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldServeAWakeupThatArrivesDuringAnAttemptWithOneMoreAttemptNeverTwoAtOnce() {
        List<CompletableFuture<String>> running = new ArrayList<>();
        LongPoll.Attempt<String> slow = (last, wake) -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            running.add(f);
            parked.add(wake);
            return f;
        };
        CompletableFuture<String> response = LongPoll.start(home, 30_000, slow);
        cycle();
        assertThat(running).hasSize(1);

        // Two wake-ups while the first attempt is still out: no second attempt starts yet.
        parked.get(0).onDataChange();
        parked.get(0).onDataChange();
        cycle();
        assertThat(running).hasSize(1);

        running.get(0).complete(null);
        cycle();
        assertThat(running).as("one more attempt for both wake-ups").hasSize(2);

        running.get(1).complete("data");
        cycle();
        assertThat(response).isCompletedWithValue("data");
        assertThat(running).hasSize(2);
    }

    @Test
    void shouldCutTheWaitShortWhenAnAttemptAsksButNeverLengthenIt() {
        List<Long> asks = new ArrayList<>(List.of(50L, 20L, 10_000L));
        LongPoll.Attempt<String> impatient = (last, wake) -> {
            attempts.add(last);
            if (last) {
                return CompletableFuture.completedFuture("cut short");
            }
            parked.add(wake);
            wake.answerWithin(asks.remove(0));
            return CompletableFuture.completedFuture(null);
        };
        CompletableFuture<String> response = LongPoll.start(home, 30_000, impatient);
        cycle();
        assertThat(home.nextDeadlineMs()).isEqualTo(clock.monoMs() + 50);

        // A wake-up after 10 ms: that attempt asks for 20 more, so the armed timer moves to 30.
        clock.advance(10);
        other.execute(() -> parked.get(0).onDataChange());
        cycle();
        assertThat(home.nextDeadlineMs()).isEqualTo(clock.monoMs() + 20);

        // The next asks for longer than is left: the deadline stays.
        clock.advance(5);
        other.execute(() -> parked.get(1).onDataChange());
        cycle();
        assertThat(home.nextDeadlineMs()).isEqualTo(clock.monoMs() + 15);
        clock.advance(14);
        cycle();
        assertThat(response).isNotDone();

        clock.advance(1);
        cycle();
        assertThat(response).isCompletedWithValue("cut short");
        assertThat(attempts).containsExactly(false, false, false, true);
    }

    @Test
    void shouldTellHowEachPollWasAnswered() {
        List<LongPoll.Outcome> told = new ArrayList<>();
        LongPoll.Answers answers = (api, outcome) -> told.add(outcome);
        boolean[] ready = {true};
        CompletableFuture<String> atOnce = LongPoll.start(home, ApiKeys.FETCH, 1_000, answers, attempt(ready));
        cycle();
        ready[0] = false;
        CompletableFuture<String> timedOut = LongPoll.start(home, ApiKeys.FETCH, 1_000, answers, attempt(ready));
        cycle();
        clock.advance(1_000);
        cycle();
        CompletableFuture<String> woken = LongPoll.start(home, ApiKeys.FETCH, 1_000, answers, attempt(ready));
        cycle();
        ready[0] = true;
        parked.get(parked.size() - 1).onDataChange();
        cycle();
        CompletableFuture<String> cutShort = LongPoll.start(home, ApiKeys.SHARE_FETCH, 1_000, answers,
                (last, wake) -> {
                    if (last) {
                        return CompletableFuture.completedFuture("cut short");
                    }
                    wake.answerWithin(5);
                    return CompletableFuture.completedFuture(null);
                });
        cycle();
        clock.advance(5);
        cycle();

        assertThat(List.of(atOnce, timedOut, woken, cutShort)).allSatisfy(f -> assertThat(f).isDone());
        assertThat(told).containsExactly(LongPoll.Outcome.AT_ONCE, LongPoll.Outcome.MAX_WAIT,
                LongPoll.Outcome.WOKEN, LongPoll.Outcome.CUT_SHORT);
    }

    @Test
    void shouldAnswerAtOnceWithAZeroMaxWait() {
        CompletableFuture<String> response = LongPoll.start(home, 0, attempt(new boolean[] {false}));
        cycle();

        assertThat(response).isCompletedWithValue("timed out");
        assertThat(attempts).containsExactly(true);
    }

    @Test
    void shouldFailTheResponseWhenAnAttemptFails() {
        CompletableFuture<String> response = LongPoll.start(home, 1_000,
                (last, wake) -> CompletableFuture.failedFuture(new IllegalStateException("read failed")));
        cycle();

        assertThat(response).isCompletedExceptionally();
    }
}
