package io.pier.service;

import java.util.function.LongConsumer;

/**
 * One step of a shard's duty cycle after its commands and timers: expiring acquisition locks and
 * member sessions, enforcing retention, snapshotting metrics. Runs on the shard thread only.
 */
public interface DutyStep {

    /** Does what is due at {@code nowMs}; returns how much work that was, 0 when nothing was due. */
    int onCycle(long nowMs);

    /** When this step next has something due; {@link Long#MAX_VALUE} if only a command can give it work. */
    long nextDeadlineMs();

    /**
     * A step that runs {@code action} every {@code intervalMs}: the first time in the first cycle if
     * {@code atStart}, else one interval after it.
     */
    static DutyStep every(long intervalMs, String name, boolean atStart, LongConsumer action) {
        return new DutyStep() {
            private long nextMs = Long.MIN_VALUE;

            @Override
            public int onCycle(long nowMs) {
                if (nextMs == Long.MIN_VALUE && !atStart) {
                    nextMs = nowMs + intervalMs;
                    return 0;
                }
                if (nowMs < nextMs) {
                    return 0;
                }
                nextMs = nowMs + intervalMs;
                action.accept(nowMs);
                return 1;
            }

            @Override
            public long nextDeadlineMs() {
                return nextMs == Long.MIN_VALUE ? Long.MIN_VALUE : nextMs;
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
