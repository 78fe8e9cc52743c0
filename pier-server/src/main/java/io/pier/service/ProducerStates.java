package io.pier.service;

import io.pier.log.ActiveProducer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * The producer state of partitions, as the admin APIs over it see it: DescribeProducers reads it,
 * WriteTxnMarkers (Admin.abortTransaction, kafka-transactions abort) ends a producer's transaction
 * on a partition. {@link Logs} runs both on the partition's shard; futures complete anywhere.
 */
public interface ProducerStates {
    /** The producers a partition knows, by id; UNKNOWN_TOPIC_OR_PARTITION if it does not exist. */
    record Producers(Errors error, List<ActiveProducer> producers) {}

    CompletableFuture<Producers> activeProducers(TopicPartition tp);

    /** See {@link Logs#writeMarker(TopicPartition, long, short, int, boolean, short)}. */
    CompletableFuture<Logs.Appended> writeMarker(TopicPartition tp, long producerId, short producerEpoch,
            int coordinatorEpoch, boolean commit, short transactionVersion);
}
