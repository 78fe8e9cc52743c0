package io.pier.state;

/**
 * One run-length range of persisted delivery state, {@code firstOffset..lastOffset} inclusive.
 *
 * <p>{@code state} is the wire id of the record state: only {@link #AVAILABLE} (0),
 * {@link #ACKNOWLEDGED} (2), {@link #ARCHIVING} (3, waiting for its dead letter) and
 * {@link #ARCHIVED} (4) are ever persisted; ACQUIRED (1) is not.
 *
 * <p>{@code notBeforeMs}: an AVAILABLE record released with a backoff (Pier's {@code
 * pier.share.release.backoff.*}) is not acquired before this time, or {@link #NO_BACKOFF}. The
 * share engine and the persister see it as a monotonic time of the running broker; on disk it is
 * a wall-clock time, converted where the share state is written and read, so that a restart keeps
 * the rest of the delay.
 */
public record PersistedBatch(long firstOffset, long lastOffset, byte state, short deliveryCount, long notBeforeMs) {
    /** No backoff: the record may be acquired at once. */
    public static final long NO_BACKOFF = Long.MIN_VALUE;
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
        if (state != AVAILABLE) {
            notBeforeMs = NO_BACKOFF;
        }
    }

    /** A range with no backoff. */
    public PersistedBatch(long firstOffset, long lastOffset, byte state, short deliveryCount) {
        this(firstOffset, lastOffset, state, deliveryCount, NO_BACKOFF);
    }

    public boolean hasBackoff() {
        return notBeforeMs != NO_BACKOFF;
    }

    /** The same value over another range. */
    public PersistedBatch withRange(long first, long last) {
        return new PersistedBatch(first, last, state, deliveryCount, notBeforeMs);
    }

    /** The same range with the backoff time mapped (from one clock to another). */
    public PersistedBatch withNotBefore(long notBefore) {
        return new PersistedBatch(firstOffset, lastOffset, state, deliveryCount, notBefore);
    }

    /** Whether the records are settled for good: ACKNOWLEDGED or ARCHIVED. */
    public boolean isSettled() {
        return state == ACKNOWLEDGED || state == ARCHIVED;
    }

    public long recordCount() {
        return lastOffset - firstOffset + 1;
    }

    boolean sameValue(PersistedBatch other) {
        return state == other.state && deliveryCount == other.deliveryCount && notBeforeMs == other.notBeforeMs;
    }

    /**
     * Combiner priority: the higher delivery count wins, then the more final state, then the later
     * backoff (a release of a delivery is written after its acquisition, with the same count).
     */
    int comparePriority(PersistedBatch other) {
        int byCount = Short.compare(deliveryCount, other.deliveryCount);
        if (byCount != 0) {
            return byCount;
        }
        int byState = Byte.compare(state, other.state);
        return byState != 0 ? byState : Long.compare(notBeforeMs, other.notBeforeMs);
    }
}
