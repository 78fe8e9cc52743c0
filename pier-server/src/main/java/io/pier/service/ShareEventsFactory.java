package io.pier.service;

import io.pier.metrics.PierMetrics;
import io.pier.share.ShareEvents;
import io.pier.state.SharePartitionKey;

/** Makes the {@link ShareEvents} listener of each share-partition {@link ShareService} creates (metrics). */
interface ShareEventsFactory {
    ShareEventsFactory NONE = (key, partition) -> ShareEvents.NONE;

    ShareEvents create(SharePartitionKey key, Partition partition);

    /** The share-partition's state was deleted: whatever was kept for its events may go. */
    default void forget(SharePartitionKey key, Partition partition) {}

    /** Share-partition events counted into the broker's metrics. */
    static ShareEventsFactory metrics(PierMetrics metrics) {
        return new ShareEventsFactory() {
            @Override
            public ShareEvents create(SharePartitionKey key, Partition partition) {
                return metrics.shareEvents(key.groupId(), partition.topicPartition().topic(),
                        partition.topicPartition().partition());
            }

            @Override
            public void forget(SharePartitionKey key, Partition partition) {
                metrics.forgetShare(key.groupId(), partition.topicPartition().topic(),
                        partition.topicPartition().partition());
            }
        };
    }
}
