package io.pier.group;

/**
 * The life cycle of a classic consumer group (JoinGroup/SyncGroup), with Kafka's wire names. A
 * group changes state only through {@code ClassicGroup.transitionTo}, which checks
 * {@link #canTransitionTo}.
 *
 * <pre>
 *            first JoinGroup          every member joined, or the
 *   +-------+  (after the initial     rebalance timeout     +----------------------+
 *   | Empty | -- delay) ---------&gt; +--------------------+ ---&gt; | CompletingRebalance  |
 *   +-------+ &lt;-- no member left - | PreparingRebalance | &lt;--- +----------------------+
 *       |                          +--------------------+  a join,    | the leader's
 *       | DeleteGroups                 ^                   leave or   | SyncGroup
 *       v                              | a join, leave     expiry     v
 *   +------+                           +-------------------------  +--------+
 *   | Dead |   terminal: the id is free again       or expiry      | Stable |
 *   +------+                                                       +--------+
 * </pre>
 */
public enum ClassicGroupState {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String wireName;

    ClassicGroupState(String wireName) {
        this.wireName = wireName;
    }

    /** Whether a group in this state may move to {@code next}. */
    boolean canTransitionTo(ClassicGroupState next) {
        return switch (next) {
            case PREPARING_REBALANCE -> this == STABLE || this == COMPLETING_REBALANCE || this == EMPTY;
            case COMPLETING_REBALANCE -> this == PREPARING_REBALANCE;
            case STABLE -> this == COMPLETING_REBALANCE;
            case EMPTY -> this == PREPARING_REBALANCE;
            case DEAD -> true;
        };
    }

    /** Kafka's name in DescribeGroups and ListGroups. */
    @Override
    public String toString() {
        return wireName;
    }
}
