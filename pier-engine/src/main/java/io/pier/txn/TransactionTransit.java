package io.pier.txn;

import io.pier.state.TransactionRecord;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * A next state of a transactional id being put together from its current one (Kafka's
 * {@code TxnTransitMetadata}): a builder, so each operation names only what it changes.
 */
final class TransactionTransit {
    private final String transactionalId;
    long producerId;
    long prevProducerId;
    long nextProducerId;
    short producerEpoch;
    short lastProducerEpoch;
    int timeoutMs;
    TransactionState state;
    final Set<TopicPartition> partitions;
    final Set<String> groupIds;
    long startTimestampMs;
    long lastUpdateTimestampMs;
    short transactionVersion;

    TransactionTransit(TransactionRecord from, TransactionState state, long nowMs) {
        this.transactionalId = from.transactionalId();
        this.producerId = from.producerId();
        this.prevProducerId = from.prevProducerId();
        this.nextProducerId = from.nextProducerId();
        this.producerEpoch = from.producerEpoch();
        this.lastProducerEpoch = from.lastProducerEpoch();
        this.timeoutMs = from.timeoutMs();
        this.state = state;
        this.partitions = new HashSet<>(from.partitions());
        this.groupIds = new HashSet<>(from.groupIds());
        this.startTimestampMs = from.startTimestampMs();
        this.lastUpdateTimestampMs = nowMs;
        this.transactionVersion = from.transactionVersion();
    }

    /** Empties the transaction: no partitions, no groups, no start time. */
    TransactionTransit cleared() {
        partitions.clear();
        groupIds.clear();
        startTimestampMs = -1;
        return this;
    }

    TransactionRecord build() {
        return new TransactionRecord(transactionalId, producerId, prevProducerId, nextProducerId, producerEpoch,
                lastProducerEpoch, timeoutMs, state.id(), partitions, groupIds, startTimestampMs,
                lastUpdateTimestampMs, transactionVersion);
    }
}
