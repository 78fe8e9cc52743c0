package io.pier.common;

/**
 * A single-threaded component driven by duty cycles, Aeron's agent model: everything it owns is
 * touched only inside {@link #doWork}, other threads reach it only through its queues, and it never
 * reads time itself. A runner thread calls {@code doWork} in a loop and parks between cycles until
 * a queue signals new work or {@link #nextDeadlineMs} comes; a test calls it directly, with a
 * manual clock and no threads at all.
 */
public interface Agent {

    /**
     * One duty cycle at monotonic time {@code nowMs} (read once by the caller from the injected
     * {@link Clock}). Returns how much work it did; 0 means it was idle and the runner may park.
     */
    int doWork(long nowMs);

    /**
     * The monotonic time at which this agent next needs a cycle even if nothing arrives on its
     * queues (a lock expiry, a long-poll timeout, a periodic pass); {@link Long#MAX_VALUE} if none.
     * Read by the runner on the agent's own thread, right after {@link #doWork}.
     */
    default long nextDeadlineMs() {
        return Long.MAX_VALUE;
    }

    /** A short name for the agent's thread and for log lines, such as {@code pier-shard-0}. */
    String roleName();

    /** Called once, on the agent's thread (or the test's), after its last duty cycle. */
    default void onClose() {}
}
