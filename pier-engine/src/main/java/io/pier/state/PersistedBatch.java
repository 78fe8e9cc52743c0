package io.pier.state;

/**
 * One run-length range of persisted delivery state, {@code firstOffset..lastOffset} inclusive.
 *
 * <p>{@code state} is the wire id of the record state: only {@link #AVAILABLE} (0),
 * {@link #ACKNOWLEDGED} (2), {@link #ARCHIVING} (3, waiting for its dead letter) and
 * {@link #ARCHIVED} (4) are ever persisted; ACQUIRED (1) is not.
 */
public record PersistedBatch(long firstOffset, long lastOffset, byte state, short deliveryCount) {
    public static final byte AVAILABLE = 0;
    public static final byte ACKNOWLEDGED = 2;
    public static final byte ARCHIVING = 3;
    public static final byte ARCHIVED = 4;

    public PersistedBatch {
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException(
                    "bad range " + firstOffset + ".." + lastOffset);
        }
        if (state != AVAILABLE && state != ACKNOWLEDGED && state != ARCHIVING && state != ARCHIVED) {
            throw new IllegalArgumentException("state " + state + " is never persisted");
        }
        if (deliveryCount < 0) {
            throw new IllegalArgumentException("deliveryCount must be >= 0: " + deliveryCount);
        }
    }

    /** Whether the records are settled for good: ACKNOWLEDGED or ARCHIVED. */
    public boolean isSettled() {
        return state == ACKNOWLEDGED || state == ARCHIVED;
    }

    public long recordCount() {
        return lastOffset - firstOffset + 1;
    }

    boolean sameValue(PersistedBatch other) {
        return state == other.state && deliveryCount == other.deliveryCount;
    }

    /** Combiner priority: the higher delivery count wins, then the more final state. */
    int comparePriority(PersistedBatch other) {
        int byCount = Short.compare(deliveryCount, other.deliveryCount);
        return byCount != 0 ? byCount : Byte.compare(state, other.state);
    }
}
