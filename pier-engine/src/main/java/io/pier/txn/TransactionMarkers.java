package io.pier.txn;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * Writes the end of a transaction where its data is: a control marker (COMMIT or ABORT) on every
 * partition, and the commit or drop of the pending transactional offsets of every group. The
 * broker implements it with {@code Logs.writeMarker} and the offset store; tests record the calls.
 *
 * <p>Markers are idempotent (a second marker of the same producer epoch finds no open
 * transaction), so after a crash the coordinator writes them again.
 */
public interface TransactionMarkers {
    /**
     * Completes once every marker is durable; fails if any could not be written (the coordinator
     * tries again later, never completes the transaction without them).
     */
    CompletableFuture<Void> write(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit,
            Collection<TopicPartition> partitions, Collection<String> groupIds);
}
