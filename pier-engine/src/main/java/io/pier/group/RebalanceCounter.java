package io.pier.group;

/**
 * How many rebalances the groups of one coordinator went through since the broker started: a
 * classic group's generations, a consumer group's epoch bumps. Shared by a coordinator and the
 * groups it creates, so the count stays when a group is deleted or changes protocol (a per-group
 * count would go back down with it, which a Prometheus counter must not). Owned by the
 * coordinator's shard like the groups: a plain field, read by that shard's metrics snapshot.
 */
public final class RebalanceCounter {
    private long count;

    /** A rebalance started. */
    public void increment() {
        count++;
    }

    /** Rebalances since this counter was made. */
    public long count() {
        return count;
    }
}
