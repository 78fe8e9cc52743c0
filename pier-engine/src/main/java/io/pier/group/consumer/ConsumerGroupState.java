package io.pier.group.consumer;

/** A consumer-protocol group's state as ListGroups and ConsumerGroupDescribe spell it (Kafka's names). */
public enum ConsumerGroupState {
    EMPTY("Empty"),
    ASSIGNING("Assigning"),
    RECONCILING("Reconciling"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String wireName;

    ConsumerGroupState(String wireName) {
        this.wireName = wireName;
    }

    @Override
    public String toString() {
        return wireName;
    }
}
