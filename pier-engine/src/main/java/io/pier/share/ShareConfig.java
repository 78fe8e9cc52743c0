package io.pier.share;

import java.util.Objects;

/**
 * The effective settings of a share group for one share-partition, resolved by the server from
 * group configs ({@code share.*}) falling back to broker configs ({@code group.share.*}). Read
 * afresh on every operation because group configs can be altered at runtime.
 *
 * @param lockDurationMs {@code share.record.lock.duration.ms}
 * @param deliveryCountLimit {@code share.delivery.count.limit}
 * @param maxInFlightRecords {@code share.partition.max.record.locks}
 * @param renewEnabled {@code share.renew.acknowledge.enable}
 * @param deadLetters whether the group has a dead-letter queue ({@code
 *     errors.deadletterqueue.topic.name}): a record that dies then goes through ARCHIVING
 * @param backoff how long a released record waits before it is acquired again
 * @param orderByKey {@code pier.share.ordering=key}: a keyed record is acquired only when every
 *     earlier record of its key is settled for good
 */
public record ShareConfig(long lockDurationMs, int deliveryCountLimit, int maxInFlightRecords, boolean renewEnabled,
        boolean deadLetters, ReleaseBackoff backoff, boolean orderByKey) {
    public static final ShareConfig DEFAULTS = new ShareConfig(30_000L, 5, 2000, true);

    /** Settings of a group without a dead-letter queue or backoff. */
    public ShareConfig(long lockDurationMs, int deliveryCountLimit, int maxInFlightRecords, boolean renewEnabled) {
        this(lockDurationMs, deliveryCountLimit, maxInFlightRecords, renewEnabled, false);
    }

    /** Settings of a group without backoff. */
    public ShareConfig(long lockDurationMs, int deliveryCountLimit, int maxInFlightRecords, boolean renewEnabled,
            boolean deadLetters) {
        this(lockDurationMs, deliveryCountLimit, maxInFlightRecords, renewEnabled, deadLetters, ReleaseBackoff.NONE);
    }

    /** Settings of a group that does not order by key. */
    public ShareConfig(long lockDurationMs, int deliveryCountLimit, int maxInFlightRecords, boolean renewEnabled,
            boolean deadLetters, ReleaseBackoff backoff) {
        this(lockDurationMs, deliveryCountLimit, maxInFlightRecords, renewEnabled, deadLetters, backoff, false);
    }

    public ShareConfig {
        if (lockDurationMs <= 0) {
            throw new IllegalArgumentException("lockDurationMs must be > 0: " + lockDurationMs);
        }
        if (deliveryCountLimit < 1 || deliveryCountLimit > Short.MAX_VALUE) {
            throw new IllegalArgumentException("deliveryCountLimit out of range: " + deliveryCountLimit);
        }
        if (maxInFlightRecords < 1) {
            throw new IllegalArgumentException("maxInFlightRecords must be > 0: " + maxInFlightRecords);
        }
        Objects.requireNonNull(backoff, "backoff");
    }

    /** The state of a record that dies (REJECTed, or at its last delivery): ARCHIVING with a dead-letter queue. */
    public RecordState deadState() {
        return deadLetters ? RecordState.ARCHIVING : RecordState.ARCHIVED;
    }

    /** Delivery count from which redelivery is throttled: max(2, ceil(limit / 2)). */
    public int throttleThreshold() {
        return Math.max(2, (deliveryCountLimit + 1) / 2);
    }
}
