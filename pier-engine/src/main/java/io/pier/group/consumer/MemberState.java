package io.pier.group.consumer;

/**
 * Where a consumer-protocol member is in reconciling towards its target assignment (KIP-848).
 * Only {@link ConsumerGroup#reconcile} moves a member between them.
 */
public enum MemberState {
    /** The member has its whole target at the group's assignment epoch. */
    STABLE("STABLE"),
    /** The member must give up partitions first; it keeps its epoch until it reports them gone. */
    UNREVOKED_PARTITIONS("UNREVOKED_PARTITIONS"),
    /** The member is at the target epoch but waits for partitions other members still hold. */
    UNRELEASED_PARTITIONS("UNRELEASED_PARTITIONS");

    private final String wireName;

    MemberState(String wireName) {
        this.wireName = wireName;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
