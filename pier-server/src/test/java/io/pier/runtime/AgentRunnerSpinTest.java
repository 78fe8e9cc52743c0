package io.pier.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.Agent;
import io.pier.common.Clock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The runner's spin after work: it finds work offered without a wake-up, and it still parks. */
class AgentRunnerSpinTest {
    /** Does one unit of work per cycle while {@link #pending} is positive; counts its cycles. */
    private static final class CountingAgent implements Agent {
        final AtomicInteger pending = new AtomicInteger();
        final AtomicLong cycles = new AtomicLong();
        final CountDownLatch done = new CountDownLatch(2);

        @Override
        public int doWork(long nowMs) {
            cycles.incrementAndGet();
            if (pending.get() > 0) {
                pending.decrementAndGet();
                done.countDown();
                return 1;
            }
            return 0;
        }

        @Override
        public String roleName() {
            return "spin-test";
        }
    }

    @Test
    void shouldFindWorkOfferedWhileSpinningWithoutAWakeup() throws InterruptedException {
        // Given a runner that spins for up to 10 s after work, and has just done some
        CountingAgent agent = new CountingAgent();
        AgentRunner runner = new AgentRunner(Clock.SYSTEM, TimeUnit.SECONDS.toNanos(10), (a, t) -> { });
        try {
            runner.start(agent);
            agent.pending.incrementAndGet();
            runner.wakeup().wake();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (agent.done.getCount() > 1 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }

            // When more work comes without a wake-up (a park would sleep 100 ms at least)
            long offeredNanos = System.nanoTime();
            agent.pending.incrementAndGet();

            // Then the spinning thread takes it at once
            assertThat(agent.done.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(System.nanoTime() - offeredNanos).isLessThan(TimeUnit.MILLISECONDS.toNanos(90));
        } finally {
            runner.close();
        }
    }

    @Test
    void shouldParkOnceTheSpinFoundNothing() throws InterruptedException {
        // Given a runner that spins for 1 ms after work, and did one unit of work
        CountingAgent agent = new CountingAgent();
        AgentRunner runner = new AgentRunner(Clock.SYSTEM, TimeUnit.MILLISECONDS.toNanos(1), (a, t) -> { });
        try {
            runner.start(agent);
            agent.pending.incrementAndGet();
            runner.wakeup().wake();
            Thread.sleep(150);

            // When nothing more comes for a while
            long before = agent.cycles.get();
            Thread.sleep(350);

            // Then it parks: a cycle per 100 ms park, no spinning
            assertThat(agent.cycles.get() - before).isLessThanOrEqualTo(6);
        } finally {
            runner.close();
        }
    }

    @Test
    void shouldRefuseANegativeSpin() {
        assertThatThrownBy(() -> new AgentRunner(Clock.SYSTEM, -1, (a, t) -> { }))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
