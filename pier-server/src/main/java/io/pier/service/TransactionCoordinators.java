package io.pier.service;

import io.pier.txn.ProducerIdAndEpoch;
import io.pier.txn.TransactionDescription;
import io.pier.txn.TransactionFilter;
import io.pier.txn.TransactionListing;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.protocol.Errors;

/**
 * The transaction coordinator of each transactional id, on its shard ({@link Transactions}), as
 * the transaction APIs call it; futures complete anywhere.
 */
public interface TransactionCoordinators {
    /** The finalized {@code transaction.version} feature level ApiVersions advertises. */
    short transactionVersion();

    CompletableFuture<ProducerIdAndEpoch> initProducerId(String transactionalId, int timeoutMs, long producerId,
            short producerEpoch);

    CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
            Collection<TopicPartition> partitions);

    /** AddPartitionsToTxn v4+ with verifyOnly: whether the partition is in the ongoing transaction. */
    CompletableFuture<Errors> verifyPartition(String transactionalId, long producerId, short producerEpoch,
            TopicPartition partition);

    /**
     * Appends a transactional batch of ({@code producerId}, {@code producerEpoch}) to {@code
     * partition} if the partition is in the producer's ongoing transaction (KIP-890 part 1), or,
     * with {@code transactionV2} (Produce v12+), once it has joined it; else the Produce error
     * Kafka gives for the refusal. The batches of one producer reach the log in the order they
     * came.
     */
    CompletableFuture<Logs.Appended> appendTransactional(String transactionalId, long producerId,
            short producerEpoch, TopicPartition partition, MemoryRecords records, boolean transactionV2);

    CompletableFuture<Errors> addOffsets(String transactionalId, long producerId, short producerEpoch,
            String groupId);

    /** TxnOffsetCommit's check: the group is in the transaction (TV1), or joins it (TV2). */
    CompletableFuture<Errors> verifyOrAddGroup(String transactionalId, long producerId, short producerEpoch,
            String groupId, boolean transactionV2);

    CompletableFuture<ProducerIdAndEpoch> endTxn(String transactionalId, long producerId, short producerEpoch,
            boolean commit, boolean transactionV2);

    CompletableFuture<Optional<TransactionDescription>> describe(String transactionalId);

    /** Every shard's ids that pass {@code filter}. */
    CompletableFuture<List<TransactionListing>> list(TransactionFilter filter);
}
