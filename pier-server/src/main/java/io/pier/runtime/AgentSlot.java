package io.pier.runtime;

import io.pier.common.Agent;
import io.pier.common.Wakeup;

/**
 * A place for one agent. Its wake-up exists before the agent does (the agent's queues need it at
 * construction); the agent runs once started, and stops on close after a last cycle, when its
 * {@link Agent#onClose} runs.
 */
public interface AgentSlot extends AutoCloseable {
    Wakeup wakeup();

    void start(Agent agent);

    @Override
    void close();
}
