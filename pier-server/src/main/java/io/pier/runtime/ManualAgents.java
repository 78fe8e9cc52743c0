package io.pier.runtime;

import io.pier.common.Agent;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Runs every agent of a broker by hand, on the caller's thread, at the time of a
 * {@link ManualClock}: the same order of events on every run, and time moves only when the test
 * moves it. Each round gives every agent one duty cycle, in the order they were started.
 */
public final class ManualAgents implements AgentHost {
    /** A future that needs more rounds than this is taken to be lost, not slow. */
    private static final int MAX_ROUNDS = 10_000;

    private final ManualClock clock;
    private final List<Agent> agents = new ArrayList<>();
    private final Set<String> held = new HashSet<>();

    public ManualAgents(ManualClock clock) {
        this.clock = clock;
    }

    @Override
    public AgentSlot slot() {
        return new AgentSlot() {
            private Agent agent;

            @Override
            public Wakeup wakeup() {
                return Wakeup.NONE;
            }

            @Override
            public void start(Agent a) {
                agent = a;
                agents.add(a);
            }

            @Override
            public void close() {
                if (agent != null && agents.remove(agent)) {
                    agent.onClose();
                }
            }
        };
    }

    /** One duty cycle of every agent not held, at the clock's time; returns the work they did. */
    public int round() {
        long nowMs = clock.monoMs();
        int work = 0;
        for (Agent a : List.copyOf(agents)) {
            if (!held.contains(a.roleName())) {
                work += a.doWork(nowMs);
            }
        }
        return work;
    }

    /** How many agents are started. */
    public int agentCount() {
        return agents.size();
    }

    /**
     * One duty cycle of the agent started {@code index}-th (among those still running), unless
     * held; returns the work it did. A test picking the index at random runs the agents in an
     * order threads could, one cycle at a time.
     */
    public int step(int index) {
        Agent a = agents.get(index);
        return held.contains(a.roleName()) ? 0 : a.doWork(clock.monoMs());
    }

    /**
     * Rounds skip the agent named {@code roleName} until {@link #release}: its queue fills and
     * nothing it would answer arrives, as if its thread were slow (a flusher inside an fsync).
     */
    public void hold(String roleName) {
        held.add(roleName);
    }

    /** Rounds run the agent named {@code roleName} again. */
    public void release(String roleName) {
        held.remove(roleName);
    }

    /** Rounds until one does nothing. */
    public void runUntilIdle() {
        for (int i = 0; i < MAX_ROUNDS; i++) {
            if (round() == 0) {
                return;
            }
        }
        throw new IllegalStateException("agents still busy after " + MAX_ROUNDS + " rounds");
    }

    /** Moves the clock, then runs until idle. */
    public void advance(long deltaMs) {
        clock.advance(deltaMs);
        runUntilIdle();
    }

    /** Rounds, without moving the clock, until {@code future} completes; then its value. */
    public <T> T await(CompletableFuture<T> future) throws ExecutionException, InterruptedException {
        for (int i = 0; i < MAX_ROUNDS && !future.isDone(); i++) {
            round();
        }
        if (!future.isDone()) {
            throw new IllegalStateException("not completed after " + MAX_ROUNDS + " rounds");
        }
        return future.get();
    }
}
