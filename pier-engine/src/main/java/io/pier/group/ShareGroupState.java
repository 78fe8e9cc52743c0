package io.pier.group;

/**
 * The life cycle of a share group, with Kafka's wire names ({@link #toString()}). A group is
 * created Empty (by a first join, or by configuring or restoring its id) and is changed only through
 * one transition method that checks {@link #canTransitionTo}.
 *
 * <pre>
 *                 a member joins (epoch 0)
 *   +-------+  -------------------------&gt;  +--------+
 *   | Empty |                              | Stable |
 *   +-------+  &lt;-------------------------  +--------+
 *       |        the last member leaves
 *       |        or its session expires
 *       | DeleteGroups
 *       v
 *   +------+
 *   | Dead |   terminal: the group object is dropped, the id is free
 *   +------+
 * </pre>
 */
public enum ShareGroupState {
    EMPTY("Empty"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String wireName;

    ShareGroupState(String wireName) {
        this.wireName = wireName;
    }

    /** Whether a group in this state may move to {@code next}. */
    boolean canTransitionTo(ShareGroupState next) {
        return switch (this) {
            case EMPTY -> next == STABLE || next == DEAD;
            case STABLE -> next == EMPTY;
            case DEAD -> false;
        };
    }

    /** Kafka's name in ListGroups and ShareGroupDescribe: {@code Empty}, {@code Stable}, {@code Dead}. */
    @Override
    public String toString() {
        return wireName;
    }
}
