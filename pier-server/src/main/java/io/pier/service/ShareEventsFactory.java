package io.pier.service;

import io.pier.metrics.PierMetrics;
import io.pier.share.ShareEvents;
import io.pier.state.SharePartitionKey;

/** Makes the {@link ShareEvents} listener of each share-partition {@link ShareService} creates (metrics). */
interface ShareEventsFactory {
    ShareEventsFactory NONE = (key, partition) -> ShareEvents.NONE;

    /** On the partition's shard: the listener of the share-partition being built. */
    ShareEvents create(SharePartitionKey key, Partition partition);

    /**
     * On the partition's shard: the share-partition's state was deleted; whatever was kept for its
     * events may go.
     */
    default void forget(SharePartitionKey key, Partition partition) {}

    /**
     * Share-partition events counted into the broker's metrics, by the shard that owns the
     * share-partition; its metrics step ({@link MetricsSnapshotStep}) flushes them.
     */
    static ShareEventsFactory metrics(PierMetrics metrics) {
        return new ShareEventsFactory() {
            @Override
            public ShareEvents create(SharePartitionKey key, Partition partition) {
                return metrics.shares(partition.shard().id()).events(key.groupId(),
                        partition.topicPartition().topic(), partition.topicPartition().partition());
            }

            @Override
            public void forget(SharePartitionKey key, Partition partition) {
                metrics.shares(partition.shard().id()).forget(key.groupId(),
                        partition.topicPartition().topic(), partition.topicPartition().partition());
            }
        };
    }
}
