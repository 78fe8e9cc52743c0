package io.pier.state;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The whole durable state of one transactional id, as the transaction coordinator writes it
 * before any reply that depends on it (Kafka's {@code TransactionLogValue}). Every record replaces
 * the previous one of its id, so compaction only keeps each id's latest.
 *
 * @param state the coordinator's state id (its {@code TransactionState.id()}); kept as a byte so
 *     the store does not depend on the coordinator
 * @param lastProducerEpoch the epoch before the latest bump, -1 for none: lets a retried
 *     InitProducerId or a TV2 EndTxn retry be recognised after a restart
 * @param prevProducerId the producer id before an epoch exhaustion moved to a new one, -1 for none
 * @param nextProducerId the producer id a TV2 transaction ending with an exhausted epoch goes on
 *     with (given out in its EndTxn response), -1 for none
 * @param transactionVersion 1 or 2 (KIP-890): how the current transaction's epochs move
 */
public record TransactionRecord(String transactionalId, long producerId, long prevProducerId, long nextProducerId,
        short producerEpoch,
        short lastProducerEpoch, int timeoutMs, byte state, Set<TopicPartition> partitions, Set<String> groupIds,
        long startTimestampMs, long lastUpdateTimestampMs, short transactionVersion) {
    public TransactionRecord {
        partitions = Set.copyOf(partitions);
        groupIds = Set.copyOf(groupIds);
    }
}
