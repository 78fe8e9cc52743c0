package io.pier.common;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Runs an {@link Agent} by hand on the test's own thread, at the time of a {@link ManualClock}: no
 * threads, no waiting, the same order of events on every run. The counterpart of the server's
 * {@code AgentRunner} for tests; the agent should be given {@link Wakeup#NONE}.
 */
public final class ManualAgentRunner {
    /** A future that needs more cycles than this is taken to be lost, not slow. */
    private static final int MAX_CYCLES = 1_000;

    private final Agent agent;
    private final ManualClock clock;

    public ManualAgentRunner(Agent agent, ManualClock clock) {
        this.agent = agent;
        this.clock = clock;
    }

    /** One duty cycle at the clock's current time; returns the work it did. */
    public int cycle() {
        return agent.doWork(clock.monoMs());
    }

    /** Cycles until one does nothing; returns the number of cycles that did something. */
    public int runUntilIdle() {
        for (int i = 0; i < MAX_CYCLES; i++) {
            if (cycle() == 0) {
                return i;
            }
        }
        throw new AssertionError(agent.roleName() + " still busy after " + MAX_CYCLES + " cycles");
    }

    /**
     * Cycles, without moving the clock, until {@code future} completes; then returns its value, or
     * throws what {@link CompletableFuture#get()} would.
     */
    public <T> T await(CompletableFuture<T> future) throws ExecutionException {
        for (int i = 0; i < MAX_CYCLES && !future.isDone(); i++) {
            cycle();
        }
        if (!future.isDone()) {
            throw new AssertionError("not completed after " + MAX_CYCLES + " cycles of " + agent.roleName());
        }
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted, although the future is done", e);
        }
    }

    /** Runs the agent's close hook, as the runner does after the last cycle. */
    public void close() {
        agent.onClose();
    }
}
