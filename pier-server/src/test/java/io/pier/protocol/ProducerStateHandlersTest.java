package io.pier.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.log.ActiveProducer;
import io.pier.service.Logs;
import io.pier.service.ProducerStates;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.junit.jupiter.api.Test;

/** DescribeProducers and WriteTxnMarkers over partitions whose producer state is given. */
class ProducerStateHandlersTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final ActiveProducer OPEN = new ActiveProducer(41, (short) 2, 9, 1_700_000_000_123L, -1, 17);
    private static final ActiveProducer IDLE = new ActiveProducer(42, (short) 0, 4, 1_700_000_000_456L, 3, -1);

    /** The marker calls made, and a fixed state and marker error per partition. */
    private static final class FixedStates implements ProducerStates {
        final Map<TopicPartition, List<ActiveProducer>> state = Map.of(ORDERS_0, List.of(OPEN, IDLE),
                ORDERS_1, List.of());
        final Map<TopicPartition, Errors> markerErrors = Map.of(ORDERS_0, Errors.NONE,
                ORDERS_1, Errors.INVALID_PRODUCER_EPOCH);
        final List<String> markers = new ArrayList<>();

        @Override
        public CompletableFuture<Producers> activeProducers(TopicPartition tp) {
            List<ActiveProducer> p = state.get(tp);
            return CompletableFuture.completedFuture(p == null
                    ? new Producers(Errors.UNKNOWN_TOPIC_OR_PARTITION, List.of()) : new Producers(Errors.NONE, p));
        }

        @Override
        public CompletableFuture<Logs.Appended> writeMarker(TopicPartition tp, long producerId, short producerEpoch,
                int coordinatorEpoch, boolean commit, short transactionVersion) {
            markers.add(tp + " pid " + producerId + " epoch " + producerEpoch + " coordinator " + coordinatorEpoch
                    + (commit ? " COMMIT" : " ABORT") + " tv " + transactionVersion);
            Errors e = markerErrors.getOrDefault(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            return CompletableFuture.completedFuture(new Logs.Appended(e, null, e == Errors.NONE ? 30 : -1, -1, 0));
        }
    }

    private final FixedStates states = new FixedStates();
    private final ProducerStateHandlers handlers = new ProducerStateHandlers(states, Access.ALLOW_ALL);

    private static ApiRequest request(ApiKeys key, short version, AbstractRequest body) {
        return new ApiRequest(new RequestHeader(key, version, "test", 1), body, null);
    }

    @Test
    void shouldDescribeEveryProducerOfEachPartitionAndRefuseUnknownOnes() {
        // Given a request for two partitions of orders, one that does not exist, and an unknown topic
        DescribeProducersRequestData data = new DescribeProducersRequestData();
        data.topics().add(new DescribeProducersRequestData.TopicRequest().setName("orders")
                .setPartitionIndexes(List.of(0, 1, 5)));
        data.topics().add(new DescribeProducersRequestData.TopicRequest().setName("gone")
                .setPartitionIndexes(List.of(0)));

        // When described
        DescribeProducersResponseData out = ((DescribeProducersResponse) handlers.describeProducers(request(
                ApiKeys.DESCRIBE_PRODUCERS, (short) 0, new DescribeProducersRequest.Builder(data).build((short) 0)))
                .join()).data();

        // Then each partition answers in request order, with every field of each producer
        assertThat(out.topics()).extracting(DescribeProducersResponseData.TopicResponse::name)
                .containsExactly("orders", "gone");
        List<DescribeProducersResponseData.PartitionResponse> orders = out.topics().get(0).partitions();
        assertThat(orders).extracting(DescribeProducersResponseData.PartitionResponse::partitionIndex)
                .containsExactly(0, 1, 5);
        assertThat(orders).extracting(DescribeProducersResponseData.PartitionResponse::errorCode)
                .containsExactly(Errors.NONE.code(), Errors.NONE.code(), Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(orders.get(0).activeProducers()).containsExactly(
                new DescribeProducersResponseData.ProducerState().setProducerId(41).setProducerEpoch(2)
                        .setLastSequence(9).setLastTimestamp(1_700_000_000_123L).setCoordinatorEpoch(-1)
                        .setCurrentTxnStartOffset(17),
                new DescribeProducersResponseData.ProducerState().setProducerId(42).setProducerEpoch(0)
                        .setLastSequence(4).setLastTimestamp(1_700_000_000_456L).setCoordinatorEpoch(3)
                        .setCurrentTxnStartOffset(-1));
        assertThat(orders.get(1).activeProducers()).isEmpty();
        assertThat(orders.get(2).activeProducers()).isEmpty();
        assertThat(out.topics().get(1).partitions()).singleElement().satisfies(p -> {
            assertThat(p.partitionIndex()).isZero();
            assertThat(p.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        });
    }

    private static WriteTxnMarkersRequestData.WritableTxnMarker marker(long producerId, boolean commit,
            String topic, Integer... partitions) {
        WriteTxnMarkersRequestData.WritableTxnMarker m = new WriteTxnMarkersRequestData.WritableTxnMarker()
                .setProducerId(producerId).setProducerEpoch((short) 2).setCoordinatorEpoch(0)
                .setTransactionResult(commit).setTransactionVersion((byte) 2);
        m.topics().add(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic)
                .setPartitionIndexes(List.of(partitions)));
        return m;
    }

    private WriteTxnMarkersResponseData writeMarkers(short version,
            WriteTxnMarkersRequestData.WritableTxnMarker... markers) {
        WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData().setMarkers(List.of(markers));
        WriteTxnMarkersRequest body = new WriteTxnMarkersRequest.Builder(data).build(version);
        return ((WriteTxnMarkersResponse) handlers.writeTxnMarkers(request(ApiKeys.WRITE_TXN_MARKERS, version,
                body)).join()).data();
    }

    @Test
    void shouldWriteEachMarkerToEachPartitionAndAnswerItsErrorPerPartition() {
        // When an abort for producer 41 on orders 0, 1 and 9 and a commit for 42 on orders 0 are written (v1)
        WriteTxnMarkersResponseData out = writeMarkers((short) 1, marker(41, false, "orders", 0, 1, 9),
                marker(42, true, "orders", 0));

        // Then each went to its partition, legacy (v1 has no transaction version) ...
        assertThat(states.markers).containsExactly(
                "orders-0 pid 41 epoch 2 coordinator 0 ABORT tv 0",
                "orders-1 pid 41 epoch 2 coordinator 0 ABORT tv 0",
                "orders-9 pid 41 epoch 2 coordinator 0 ABORT tv 0",
                "orders-0 pid 42 epoch 2 coordinator 0 COMMIT tv 0");
        // ... and each partition answers what its log said, grouped by producer and topic
        assertThat(out.markers()).extracting(WriteTxnMarkersResponseData.WritableTxnMarkerResult::producerId)
                .containsExactly(41L, 42L);
        WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult first = out.markers().get(0).topics().get(0);
        assertThat(first.name()).isEqualTo("orders");
        assertThat(first.partitions()).extracting(p -> p.partitionIndex() + ":" + Errors.forCode(p.errorCode()))
                .containsExactly("0:NONE", "1:INVALID_PRODUCER_EPOCH", "9:UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(out.markers().get(1).topics()).singleElement().satisfies(t -> assertThat(t.partitions())
                .extracting(p -> p.partitionIndex() + ":" + Errors.forCode(p.errorCode())).containsExactly("0:NONE"));
    }

    @Test
    void shouldPassTheMarkersTransactionVersionFromVersionTwo() {
        writeMarkers((short) 2, marker(41, false, "orders", 0));

        assertThat(states.markers).containsExactly("orders-0 pid 41 epoch 2 coordinator 0 ABORT tv 2");
    }
}
