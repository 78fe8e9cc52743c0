package io.pier.common;

/**
 * How a producer on another thread tells an agent's runner that a queue has new work, so the
 * runner stops parking at once instead of polling. Safe to call from any thread, any number of
 * times; a wake-up that arrives while the agent is busy makes its next park return at once.
 */
@FunctionalInterface
public interface Wakeup {
    /** For agents driven by hand (tests) or polled by a loop that never parks. */
    Wakeup NONE = () -> { };

    void wake();
}
