package io.pier.share;

/**
 * What happens to the records of one share-partition, told as it happens, for metrics. The
 * engine calls it from the one method through which every record-state change passes, on the
 * thread that owns the share-partition; implementations must be cheap, must not block and must
 * not call back into the share-partition. Every method defaults to doing nothing.
 *
 * <p>Acknowledgements and member releases are told when they commit (are durable), not when they
 * are applied tentatively; a rolled-back acknowledgement is never told. Offsets the log proved
 * missing, transaction markers and GAP acknowledgements are not records and are not told, nor are
 * the records of aborted transactions a read_committed group archives without delivering them.
 */
public interface ShareEvents {
    /** Tells nothing. */
    ShareEvents NONE = new ShareEvents() {};

    /** Why records were archived (left for good without being accepted). */
    enum ArchiveCause {
        /** A consumer rejected the record. */
        REJECTED,
        /** Released, timed out or handed back on its last allowed delivery. */
        DELIVERY_LIMIT,
        /** Retention or DeleteRecords moved the log start past the record before it was settled. */
        LOG_START
    }

    /** A record was acquired by a member; {@code deliveryCount} includes this delivery. */
    default void onAcquired(int deliveryCount) {}

    /** A consumer's ACCEPT committed. */
    default void onAccepted(int deliveryCount) {}

    /** A consumer's REJECT committed (the record is also told as archived, REJECTED). */
    default void onRejected(int deliveryCount) {}

    /** A consumer's RELEASE committed (archived at the delivery limit, else available again). */
    default void onReleased(int deliveryCount) {}

    /** The acquisition lock of a record expired before its holder settled it. */
    default void onLockExpired(int deliveryCount) {}

    /** A record went back because its holder's share session ended. */
    default void onMemberReleased(int deliveryCount) {}

    /** {@code records} records were archived for {@code cause}. */
    default void onArchived(ArchiveCause cause, long records) {}

    /**
     * Dead records left ARCHIVING: {@code written} with their dead letter durable, {@code failed}
     * without one (the dead-letter queue could not be written).
     */
    default void onDeadLetters(long written, long failed) {}
}
