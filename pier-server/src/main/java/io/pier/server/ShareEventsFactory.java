package io.pier.server;

import io.pier.share.ShareEvents;
import io.pier.state.SharePartitionKey;

/** Makes the {@link ShareEvents} listener of each share-partition {@link ShareService} creates (metrics). */
interface ShareEventsFactory {
    ShareEventsFactory NONE = (key, partition) -> ShareEvents.NONE;

    ShareEvents create(SharePartitionKey key, Partition partition);

    /** The share-partition's state was deleted: whatever was kept for its events may go. */
    default void forget(SharePartitionKey key, Partition partition) {}
}
