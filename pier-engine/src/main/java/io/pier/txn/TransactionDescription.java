package io.pier.txn;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * What DescribeTransactions shows of one transactional id.
 *
 * @param startTimestampMs wall ms the ongoing transaction began, -1 when there is none
 * @param groupIds the groups whose offsets the transaction commits (Kafka shows them as their
 *     {@code __consumer_offsets} partitions; the adapter decides)
 */
public record TransactionDescription(String transactionalId, TransactionState state, long producerId,
        short producerEpoch, int timeoutMs, long startTimestampMs, Set<TopicPartition> partitions,
        Set<String> groupIds) {}
