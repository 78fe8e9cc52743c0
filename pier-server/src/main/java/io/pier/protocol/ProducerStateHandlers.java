package io.pier.protocol;

import io.pier.log.ActiveProducer;
import io.pier.service.Futures;
import io.pier.service.ProducerStates;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/**
 * The APIs over partitions' producer state that Kafka's admin tools use to find and end hanging
 * transactions: DescribeProducers (v0) and WriteTxnMarkers (v1-2, which Kafka brokers send each
 * other and {@code Admin.abortTransaction} sends to a partition's leader). Answered by the
 * partitions' shards through {@link ProducerStates}.
 *
 * <p>A partition that does not exist answers UNKNOWN_TOPIC_OR_PARTITION, as Kafka's
 * ReplicaManager does on a broker that does not host it; a stale marker answers
 * INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED from the log's check.
 */
public final class ProducerStateHandlers {
    /** WriteTxnMarkers v2 carries each marker's transaction version (KIP-1228); before, legacy. */
    private static final short FIRST_MARKER_TRANSACTION_VERSION = 2;

    private final ProducerStates producers;

    private final Access access;

    public ProducerStateHandlers(ProducerStates producers, Access access) {
        this.producers = producers;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> describeProducers(ApiRequest request) {
        DescribeProducersRequestData in = request.bodyAs(DescribeProducersRequest.class).data();
        List<CompletableFuture<DescribeProducersResponseData.TopicResponse>> topics = new ArrayList<>();
        for (DescribeProducersRequestData.TopicRequest t : in.topics()) {
            List<CompletableFuture<DescribeProducersResponseData.PartitionResponse>> partitions = new ArrayList<>();
            boolean mayRead = access.topic(request, AclOperation.READ, t.name());
            for (int index : t.partitionIndexes()) {
                if (!mayRead) {
                    partitions.add(CompletableFuture.completedFuture(new DescribeProducersResponseData.PartitionResponse()
                            .setPartitionIndex(index).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
                    continue;
                }
                partitions.add(producers.activeProducers(new TopicPartition(t.name(), index))
                        .thenApply(p -> described(index, p)));
            }
            topics.add(Futures.all(partitions).thenApply(each -> new DescribeProducersResponseData.TopicResponse()
                    .setName(t.name()).setPartitions(each)));
        }
        return Futures.all(topics).thenApply(each -> new DescribeProducersResponse(
                new DescribeProducersResponseData().setTopics(each)));
    }

    private static DescribeProducersResponseData.PartitionResponse described(int index,
            ProducerStates.Producers p) {
        DescribeProducersResponseData.PartitionResponse out = new DescribeProducersResponseData.PartitionResponse()
                .setPartitionIndex(index).setErrorCode(p.error().code());
        for (ActiveProducer a : p.producers()) {
            out.activeProducers().add(new DescribeProducersResponseData.ProducerState()
                    .setProducerId(a.producerId()).setProducerEpoch(a.producerEpoch())
                    .setLastSequence(a.lastSequence()).setLastTimestamp(a.lastTimestampMs())
                    .setCoordinatorEpoch(a.coordinatorEpoch()).setCurrentTxnStartOffset(a.currentTxnStartOffset()));
        }
        return out;
    }

    public CompletableFuture<AbstractResponse> writeTxnMarkers(ApiRequest request) {
        WriteTxnMarkersRequestData in = request.bodyAs(WriteTxnMarkersRequest.class).data();
        short version = request.version();
        List<CompletableFuture<WriteTxnMarkersResponseData.WritableTxnMarkerResult>> markers = new ArrayList<>();
        for (WriteTxnMarkersRequestData.WritableTxnMarker m : in.markers()) {
            short transactionVersion = version >= FIRST_MARKER_TRANSACTION_VERSION ? m.transactionVersion() : 0;
            List<CompletableFuture<WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult>> topics = new ArrayList<>();
            for (WriteTxnMarkersRequestData.WritableTxnMarkerTopic t : m.topics()) {
                List<CompletableFuture<WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult>> partitions =
                        new ArrayList<>();
                for (int index : t.partitionIndexes()) {
                    partitions.add(producers.writeMarker(new TopicPartition(t.name(), index), m.producerId(),
                            m.producerEpoch(), m.coordinatorEpoch(), m.transactionResult(), transactionVersion)
                            .thenApply(a -> new WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult()
                                    .setPartitionIndex(index).setErrorCode(a.error().code())));
                }
                topics.add(Futures.all(partitions).thenApply(each ->
                        new WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult().setName(t.name())
                                .setPartitions(each)));
            }
            markers.add(Futures.all(topics).thenApply(each ->
                    new WriteTxnMarkersResponseData.WritableTxnMarkerResult().setProducerId(m.producerId())
                            .setTopics(each)));
        }
        return Futures.all(markers).thenApply(each -> new WriteTxnMarkersResponse(
                new WriteTxnMarkersResponseData().setMarkers(each)));
    }
}
