package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A shard driven by hand: no threads, time moved on a manual clock. */
class ShardTest {
    private final ManualClock clock = new ManualClock(1_000_000);
    private final List<String> fatal = new ArrayList<>();
    private final AtomicInteger wakeups = new AtomicInteger();
    private final Shard shard = new Shard(0, wakeups::incrementAndGet, (what, cause) -> fatal.add(what));

    @Test
    void shouldRunCommandsInOrderInTheNextDutyCycleAndWakeTheRunner() {
        List<Integer> ran = new ArrayList<>();

        shard.execute(() -> ran.add(1));
        shard.execute(() -> ran.add(2));

        assertThat(ran).isEmpty();
        assertThat(wakeups.get()).isEqualTo(2);
        assertThat(shard.nextDeadlineMs()).isLessThanOrEqualTo(clock.monoMs());
        assertThat(shard.doWork(clock.monoMs())).isEqualTo(2);
        assertThat(ran).containsExactly(1, 2);
        assertThat(shard.doWork(clock.monoMs())).isZero();
    }

    @Test
    void shouldCompleteACallWithItsValueOrItsFailure() {
        CompletableFuture<String> ok = shard.call(() -> "done");
        CompletableFuture<String> failed = shard.call(() -> {
            throw new IllegalStateException("boom");
        });

        shard.doWork(clock.monoMs());

        assertThat(ok).isCompletedWithValue("done");
        assertThat(failed).isCompletedExceptionally();
    }

    @Test
    void shouldFireTimersAtTheirDeadlineOnTheCycleTimeAndSkipCancelledOnes() {
        List<String> fired = new ArrayList<>();
        long start = clock.monoMs();
        shard.execute(() -> {
            shard.schedule(start + 500, () -> fired.add("late"));
            shard.schedule(start + 100, () -> fired.add("early"));
            shard.schedule(start + 200, () -> fired.add("cancelled")).cancel();
        });
        shard.doWork(start);
        assertThat(shard.nextDeadlineMs()).isEqualTo(start + 100);

        clock.advance(99);
        shard.doWork(clock.monoMs());
        assertThat(fired).isEmpty();

        clock.advance(1);
        shard.doWork(clock.monoMs());
        assertThat(fired).containsExactly("early");
        assertThat(shard.nextDeadlineMs()).isEqualTo(start + 500);

        clock.advance(1_000);
        shard.doWork(clock.monoMs());
        assertThat(fired).containsExactly("early", "late");
        assertThat(shard.nextDeadlineMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldRunStepsEveryCycleInOrderAndAskForTheirDeadlines() {
        List<String> ran = new ArrayList<>();
        long start = clock.monoMs();
        shard.addStep(DutyStep.every(1_000, "first", true, nowMs -> ran.add("first@" + (nowMs - start))));
        shard.addStep(DutyStep.every(300, "second", false, nowMs -> ran.add("second@" + (nowMs - start))));

        shard.doWork(start);
        assertThat(ran).containsExactly("first@0");
        assertThat(shard.nextDeadlineMs()).isEqualTo(start + 300);

        clock.advance(300);
        shard.doWork(clock.monoMs());
        clock.advance(700);
        shard.doWork(clock.monoMs());

        assertThat(ran).containsExactly("first@0", "second@300", "first@1000", "second@1000");
    }

    @Test
    void shouldKeepRunningWhenACommandOrAStepThrows() {
        List<String> ran = new ArrayList<>();
        shard.addStep(new DutyStep() {
            @Override
            public int onCycle(long nowMs) {
                throw new IllegalStateException("step broke");
            }

            @Override
            public long nextDeadlineMs() {
                return Long.MAX_VALUE;
            }
        });
        shard.execute(() -> {
            throw new IllegalStateException("command broke");
        });
        shard.execute(() -> ran.add("after"));

        shard.doWork(clock.monoMs());

        assertThat(ran).containsExactly("after");
        assertThat(fatal).isEmpty();
    }

    @Test
    void shouldRunQueuedCommandsThenItsCloseHooksWhenStoppedAndRefuseLaterOnes() {
        List<String> ran = new ArrayList<>();
        shard.addCloseHook(() -> ran.add("hook"));
        shard.execute(() -> ran.add("queued"));

        shard.onClose();
        CompletableFuture<String> refused = shard.call(() -> "never");

        assertThat(ran).containsExactly("queued", "hook");
        assertThat(refused).isCompletedExceptionally();
    }

    @Test
    void shouldRunWithoutAnyRunnerWhenGivenNoWakeup() {
        Shard alone = new Shard(1, Wakeup.NONE, (what, cause) -> fatal.add(what));
        CompletableFuture<Integer> result = alone.call(() -> 42);

        alone.doWork(clock.monoMs());

        assertThat(result).isCompletedWithValue(42);
        assertThat(alone.roleName()).isEqualTo("pier-shard-1");
    }
}
