package io.pier.runtime;

import io.pier.common.Clock;

/**
 * Where a broker's agents run: one thread each ({@link #threads}), or by hand on a test's thread
 * ({@link ManualAgents}). The broker is wired the same way for both.
 */
@FunctionalInterface
public interface AgentHost {
    AgentSlot slot();

    /** Each agent on its own {@link AgentRunner} thread, reading {@code clock} once per cycle. */
    static AgentHost threads(Clock clock, AgentRunner.ErrorHandler errors) {
        return threads(clock, 0, errors);
    }

    /**
     * As {@link #threads(Clock, AgentRunner.ErrorHandler)}, each thread spinning up to
     * {@code spinNanos} for more work after a cycle that did some, before it parks.
     */
    static AgentHost threads(Clock clock, long spinNanos, AgentRunner.ErrorHandler errors) {
        return () -> new AgentRunner(clock, spinNanos, errors);
    }
}
