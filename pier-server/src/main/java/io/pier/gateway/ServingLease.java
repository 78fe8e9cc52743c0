package io.pier.gateway;

/**
 * How long a gateway node may go on serving its state partitions without a word from the
 * upstream. The group drops a node whose heartbeats stop reaching it after the session timeout,
 * and another node takes its state partitions over; a node cut off from the upstream hears
 * nothing of that; its clients' sessions with it would go on, getting no error that sends them
 * elsewhere, until one of its state writes timed out (30 s). So the node gives its state
 * partitions up itself once neither the group's coordinator (a heartbeat, JoinGroup or SyncGroup
 * answer) nor any other upstream request of the node has answered for {@code leaseMs}.
 *
 * <p>Two signals, because each alone can be quiet on a healthy node: the group's consumer sends
 * no heartbeat while its JoinGroup waits for a member that is gone (up to a session timeout), and
 * a node with no client traffic sends the upstream nothing else. Ownership stays safe without the
 * lease: whoever takes a state partition over fences the old writer. The lease only bounds how
 * long clients are kept on a node that cannot serve them.
 *
 * <p>Times are monotonic nanoseconds. Owned by the membership thread; no locks, no clock of its
 * own, so tests drive it with numbers.
 */
final class ServingLease {
    private final long leaseNanos;
    private double groupAnswers = -1;
    private long lastGroupAnswerNanos;

    ServingLease(long leaseMs, long nowNanos) {
        if (leaseMs < 1) {
            throw new IllegalArgumentException("lease must be at least 1 ms: " + leaseMs);
        }
        this.leaseNanos = leaseMs * 1_000_000L;
        this.lastGroupAnswerNanos = nowNanos;
    }

    /**
     * Notes how many answers the group's coordinator has given the node's group consumer so far;
     * a count higher than the last one renews the lease from {@code nowNanos}.
     */
    void groupAnswers(double total, long nowNanos) {
        if (total > groupAnswers) {
            groupAnswers = total;
            lastGroupAnswerNanos = nowNanos;
        }
    }

    /**
     * True once neither the group (see {@link #groupAnswers}) nor the upstream, last heard from at
     * {@code lastUpstreamAnswerNanos}, has answered within the lease.
     */
    boolean expired(long lastUpstreamAnswerNanos, long nowNanos) {
        long last = lastUpstreamAnswerNanos - lastGroupAnswerNanos > 0 ? lastUpstreamAnswerNanos : lastGroupAnswerNanos;
        return nowNanos - last > leaseNanos;
    }

    /** Starts the lease afresh from {@code nowNanos}: the node has given everything up and joins again. */
    /** The lease's length, for the log. */
    long lengthMs() {
        return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(leaseNanos);
    }

    void restart(long nowNanos) {
        lastGroupAnswerNanos = nowNanos;
    }
}
