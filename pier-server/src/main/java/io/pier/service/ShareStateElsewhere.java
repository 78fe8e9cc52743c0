package io.pier.service;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.pier.service.ShareOffsets.StateSummary;
import io.pier.state.SharePartitionKey;

/**
 * The share-partition state this node does not serve, read and changed through the node that
 * does: on a gateway, each node serves the state partitions the work split gave it, while a
 * share group's coordinator answers Admin for all of the group's share-partitions (as Kafka's
 * group coordinator asks each share coordinator). A single broker serves everything itself.
 */
public interface ShareStateElsewhere {
    /** A single broker's: nothing is served elsewhere. */
    ShareStateElsewhere NONE = new ShareStateElsewhere() {
        @Override
        public CompletableFuture<List<StateSummary>> groupStates(String groupId) {
            return CompletableFuture.completedFuture(List.of());
        }

        @Override
        public CompletableFuture<StateSummary> summary(SharePartitionKey key) {
            return unserved(key);
        }

        @Override
        public CompletableFuture<Void> reset(SharePartitionKey key, long startOffset) {
            return unserved(key);
        }

        @Override
        public CompletableFuture<Void> delete(SharePartitionKey key) {
            return unserved(key);
        }

        private <T> CompletableFuture<T> unserved(SharePartitionKey key) {
            return CompletableFuture.failedFuture(new IllegalStateException("no node serves " + key));
        }
    };

    /** Every share-partition of {@code groupId} with state on the other nodes, with its summary. */
    CompletableFuture<List<StateSummary>> groupStates(String groupId);

    /** The state summary of a share-partition another node serves. */
    CompletableFuture<StateSummary> summary(SharePartitionKey key);

    /** {@link ShareOffsets#reset} on the node that serves {@code key}. */
    CompletableFuture<Void> reset(SharePartitionKey key, long startOffset);

    /** {@link ShareOffsets#deleteState} on the node that serves {@code key}. */
    CompletableFuture<Void> delete(SharePartitionKey key);
}
