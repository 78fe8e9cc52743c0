package io.pier.share;

/** Why a record's state changes; decides what {@link ShareEvents} hears about it. */
enum ChangeCause {
    ACQUIRE,
    ACCEPT,
    RELEASE,
    REJECT,
    GAP,
    LOCK_EXPIRY,
    MEMBER_RELEASE,
    /** The log proved the offset holds no record for a consumer (none at all, or a transaction marker). */
    MISSING_FROM_LOG,
    /** The delivery limit was lowered below the record's delivery count. */
    LIMIT_LOWERED,
    /** A pending change failed to persist; its record's lock had gone meanwhile. */
    ROLLBACK,
    /** A record of an aborted transaction, which a read_committed group never gets. */
    ABORTED,
    /** An ARCHIVING record's dead letter is durable, or could not be written. */
    DEAD_LETTERED;

    private static final ChangeCause[] VALUES = values();

    static ChangeCause of(AcknowledgeType type) {
        switch (type) {
            case ACCEPT:
                return ACCEPT;
            case RELEASE:
                return RELEASE;
            case REJECT:
                return REJECT;
            case GAP:
                return GAP;
            default:
                throw new IllegalArgumentException("no state change for " + type);
        }
    }

    static ChangeCause forOrdinal(int ordinal) {
        return VALUES[ordinal];
    }
}
