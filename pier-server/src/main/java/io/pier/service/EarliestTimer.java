package io.pier.service;

/**
 * One shard timer kept at the earliest deadline a coordinator has asked for: a deadline at or
 * after the armed one leaves it, an earlier one replaces it. What fires asks again for the next.
 * Shard thread only.
 */
final class EarliestTimer {
    private final Shard shard;
    private Deadlines.Timer timer;
    private long atMs = Long.MAX_VALUE;

    EarliestTimer(Shard shard) {
        this.shard = shard;
    }

    /** Arms for {@code deadlineMs} (the shard's monotonic ms; MAX_VALUE: none) to run {@code due}. */
    void armAt(long deadlineMs, Runnable due) {
        if (deadlineMs == Long.MAX_VALUE || (timer != null && atMs <= deadlineMs)) {
            return;
        }
        if (timer != null) {
            timer.cancel();
        }
        atMs = deadlineMs;
        timer = shard.schedule(deadlineMs, () -> {
            timer = null;
            atMs = Long.MAX_VALUE;
            due.run();
        });
    }
}
