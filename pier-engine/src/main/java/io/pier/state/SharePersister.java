package io.pier.state;

import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Durable store for share-partition delivery state, the boundary between the share engine and
 * whatever keeps the state (an internal log, or a Kafka cluster's share coordinator).
 *
 * <p>Contract the engine relies on: a write's future completes only once the change is durable; a
 * future that completes exceptionally means the change did not happen, and the engine rolls it
 * back. Writes for one key are applied in the order they are issued.
 */
public interface SharePersister {

    /** Merges the changed ranges into the stored state and replaces the start offset. */
    CompletableFuture<Void> write(ShareStateWrite write);

    /** The stored state, or {@code null} if this key was never initialised. */
    ShareState read(SharePartitionKey key);

    /** Creates (or resets, bumping the state epoch) the state of a key at a start offset. */
    CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset);

    /** Drops the state of a key. */
    CompletableFuture<Void> delete(SharePartitionKey key);

    /** Every key with stored state, so admin APIs can list a group's partitions after a restart. */
    Set<SharePartitionKey> keys();

    /**
     * True if this store keeps {@code key}'s state here: always on a broker; on a gateway node only
     * for the state partitions it serves (the others' share-partitions are led by other nodes).
     */
    default boolean serves(SharePartitionKey key) {
        return true;
    }
}
