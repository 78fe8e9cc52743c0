package io.pier.metrics;

import java.util.Collections;
import java.util.List;

/**
 * What the counters of one share-partition have counted since the broker started (or since its
 * state was last deleted), as of the owning shard's last flush. Immutable; taken on the owning
 * shard and read from any thread.
 *
 * @param archivedRejected records archived because a consumer rejected them
 * @param archivedDeliveryLimit records archived at the delivery limit
 * @param archivedLogStart records archived because the log start moved past them
 * @param acceptedByDeliveryCount records accepted per delivery count: index 0 for 1, ..., 9 for 10,
 *     10 for more
 * @param rejectedByDeliveryCount the same for rejected records
 */
public record ShareCounts(
        long deliveries,
        long accepts,
        long rejects,
        long releases,
        long lockExpiries,
        long sessionReleases,
        long archivedRejected,
        long archivedDeliveryLimit,
        long archivedLogStart,
        long deadLetters,
        long deadLetterFailures,
        List<Long> acceptedByDeliveryCount,
        List<Long> rejectedByDeliveryCount) {
    /** Buckets of the delivery-count lists: 1 to 10, then more than 10. */
    public static final int DELIVERY_COUNT_BUCKETS = DeliveryCountHistogram.BUCKETS;

    /** Nothing counted yet. */
    public static final ShareCounts NONE = new ShareCounts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            Collections.nCopies(DELIVERY_COUNT_BUCKETS, 0L), Collections.nCopies(DELIVERY_COUNT_BUCKETS, 0L));

    public ShareCounts {
        acceptedByDeliveryCount = List.copyOf(acceptedByDeliveryCount);
        rejectedByDeliveryCount = List.copyOf(rejectedByDeliveryCount);
        if (acceptedByDeliveryCount.size() != DELIVERY_COUNT_BUCKETS
                || rejectedByDeliveryCount.size() != DELIVERY_COUNT_BUCKETS) {
            throw new IllegalArgumentException("expected " + DELIVERY_COUNT_BUCKETS + " delivery-count buckets");
        }
    }
}
