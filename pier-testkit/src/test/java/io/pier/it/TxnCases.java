package io.pier.it;

import static io.pier.it.ProtocolVersionMatrixIT.assertNoErrors;
import static io.pier.it.ProtocolVersionMatrixIT.name;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ProtocolVersionMatrixIT.Case;
import io.pier.it.ProtocolVersionMatrixIT.Connection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/** The matrix cells of the transaction APIs: each version drives a transaction of its own id. */
final class TxnCases {
    private TxnCases() {}

    /** A transactional producer as InitProducerId made it. */
    record Producer(String transactionalId, long producerId, short epoch) {}

    static Producer init(Connection c, String transactionalId) throws IOException {
        InitProducerIdResponse r = c.call(ApiKeys.INIT_PRODUCER_ID, (short) 4, new InitProducerIdRequestData()
                .setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000)
                .setProducerId(-1).setProducerEpoch((short) -1));
        assertNoErrors(r);
        return new Producer(transactionalId, r.data().producerId(), r.data().producerEpoch());
    }

    static AddPartitionsToTxnTopicCollection topics(String topic) {
        AddPartitionsToTxnTopicCollection topics = new AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnTopic().setName(topic).setPartitions(List.of(0)));
        return topics;
    }

    /** AddPartitionsToTxn at {@code v}: the client shape up to v3, the batched one from v4. */
    static void addPartition(Connection c, Producer p, String topic, short v) throws IOException {
        AddPartitionsToTxnRequestData data = new AddPartitionsToTxnRequestData();
        if (v <= 3) {
            data.setV3AndBelowTransactionalId(p.transactionalId()).setV3AndBelowProducerId(p.producerId())
                    .setV3AndBelowProducerEpoch(p.epoch()).setV3AndBelowTopics(topics(topic));
        } else {
            AddPartitionsToTxnTransactionCollection txns = new AddPartitionsToTxnTransactionCollection();
            txns.add(new AddPartitionsToTxnTransaction().setTransactionalId(p.transactionalId())
                    .setProducerId(p.producerId()).setProducerEpoch(p.epoch()).setVerifyOnly(false)
                    .setTopics(topics(topic)));
            data.setTransactions(txns);
        }
        AddPartitionsToTxnResponse r = c.call(ApiKeys.ADD_PARTITIONS_TO_TXN, v, data);
        assertNoErrors(r);
    }

    static void addOffsets(Connection c, Producer p, String group, short v) throws IOException {
        assertNoErrors(c.call(ApiKeys.ADD_OFFSETS_TO_TXN, v, new AddOffsetsToTxnRequestData()
                .setTransactionalId(p.transactionalId()).setProducerId(p.producerId()).setProducerEpoch(p.epoch())
                .setGroupId(group)));
    }

    static EndTxnResponse end(Connection c, Producer p, boolean commit, short v) throws IOException {
        EndTxnResponse r = c.call(ApiKeys.END_TXN, v, new EndTxnRequestData().setTransactionalId(p.transactionalId())
                .setProducerId(p.producerId()).setProducerEpoch(p.epoch()).setCommitted(commit));
        assertNoErrors(r);
        return r;
    }

    /** A topic of one partition of the cell's own, so its open transaction holds back no other cell. */
    static String ownTopic(Connection c, String prefix, short v) throws IOException {
        String topic = name(prefix, v);
        CreateTopicsResponse r = c.call(ApiKeys.CREATE_TOPICS, (short) 7, MatrixRequests.createTopics(topic));
        assertNoErrors(r);
        return topic;
    }

    /** Produces {@code count} records of {@code p}'s transaction to partition 0; returns their base offset. */
    static long produceInTransaction(Connection c, Producer p, String topic, int count) throws IOException {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null,
                    ("txn-" + i).getBytes(StandardCharsets.UTF_8));
        }
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic);
        t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(MemoryRecords.withTransactionalRecords(Compression.NONE, p.producerId(), p.epoch(), 0,
                        records)));
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000)
                .setTransactionalId(p.transactionalId());
        data.topicData().add(t);
        ProduceResponse r = c.call(ApiKeys.PRODUCE, (short) 9, data);
        assertNoErrors(r);
        return r.data().responses().iterator().next().partitionResponses().get(0).baseOffset();
    }

    /** DescribeProducers v0 of partitions 0 and 9 (which does not exist) of {@code topic}. */
    static List<DescribeProducersResponseData.PartitionResponse> describeProducers(Connection c, String topic, short v)
            throws IOException {
        DescribeProducersRequestData data = new DescribeProducersRequestData();
        data.topics().add(new DescribeProducersRequestData.TopicRequest().setName(topic)
                .setPartitionIndexes(List.of(0, 9)));
        DescribeProducersResponse r = c.call(ApiKeys.DESCRIBE_PRODUCERS, v, data);
        assertThat(r.data().topics()).singleElement().satisfies(t -> assertThat(t.name()).isEqualTo(topic));
        List<DescribeProducersResponseData.PartitionResponse> partitions = r.data().topics().get(0).partitions();
        assertThat(partitions).extracting(DescribeProducersResponseData.PartitionResponse::partitionIndex)
                .containsExactly(0, 9);
        assertThat(partitions.get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partitions.get(1).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        return partitions;
    }

    static void register(Map<ApiKeys, Case> cases) {
        String topic = ProtocolVersionMatrixIT.topic();
        cases.put(ApiKeys.ADD_PARTITIONS_TO_TXN, (c, v) -> {
            Producer p = init(c, name("matrix-txn-add-v", v));
            addPartition(c, p, topic, v);
            end(c, p, false, (short) 3);
        });
        cases.put(ApiKeys.ADD_OFFSETS_TO_TXN, (c, v) -> {
            Producer p = init(c, name("matrix-txn-offsets-v", v));
            addOffsets(c, p, name("matrix-txn-offsets-group-v", v), v);
            end(c, p, false, (short) 3);
        });
        cases.put(ApiKeys.END_TXN, (c, v) -> {
            Producer p = init(c, name("matrix-txn-end-v", v));
            addPartition(c, p, topic, (short) 3);
            EndTxnResponse r = end(c, p, true, v);
            if (v >= 5) {
                // transaction version 2: every EndTxn bumps the epoch, and says so
                assertThat(r.data().producerId()).isEqualTo(p.producerId());
                assertThat(r.data().producerEpoch()).isEqualTo((short) (p.epoch() + 1));
            }
        });
        cases.put(ApiKeys.TXN_OFFSET_COMMIT, (c, v) -> {
            Producer p = init(c, name("matrix-txn-commit-v", v));
            String group = name("matrix-txn-commit-group-v", v);
            addOffsets(c, p, group, (short) 3);
            TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData().setTransactionalId(p.transactionalId())
                    .setGroupId(group).setProducerId(p.producerId()).setProducerEpoch(p.epoch())
                    .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(topic)
                            .setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                    .setPartitionIndex(0).setCommittedOffset(1).setCommittedMetadata("m")))));
            TxnOffsetCommitResponse r = c.call(ApiKeys.TXN_OFFSET_COMMIT, v, data);
            assertNoErrors(r);
            assertThat(r.data().topics()).singleElement().satisfies(t -> {
                assertThat(t.name()).isEqualTo(topic);
                assertThat(t.partitions()).singleElement()
                        .satisfies(part -> assertThat(part.partitionIndex()).isZero());
            });
            end(c, p, true, (short) 3);
        });
        cases.put(ApiKeys.DESCRIBE_TRANSACTIONS, (c, v) -> {
            Producer p = init(c, name("matrix-txn-describe-v", v));
            DescribeTransactionsResponse r = c.call(ApiKeys.DESCRIBE_TRANSACTIONS, v,
                    new DescribeTransactionsRequestData().setTransactionalIds(List.of(p.transactionalId(), "none-v" + v)));
            assertThat(r.data().transactionStates()).hasSize(2);
            assertThat(r.data().transactionStates().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(r.data().transactionStates().get(0).transactionState()).isEqualTo("Empty");
            assertThat(r.data().transactionStates().get(0).producerId()).isEqualTo(p.producerId());
            assertThat(r.data().transactionStates().get(1).errorCode())
                    .isEqualTo(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        });
        cases.put(ApiKeys.LIST_TRANSACTIONS, (c, v) -> {
            Producer p = init(c, name("matrix-txn-list-v", v));
            ListTransactionsResponse r = c.call(ApiKeys.LIST_TRANSACTIONS, v, new ListTransactionsRequestData());
            assertNoErrors(r);
            assertThat(r.data().transactionStates()).anySatisfy(s -> {
                assertThat(s.transactionalId()).isEqualTo(p.transactionalId());
                assertThat(s.producerId()).isEqualTo(p.producerId());
            });
        });
        cases.put(ApiKeys.DESCRIBE_PRODUCERS, (c, v) -> {
            String own = ownTopic(c, "matrix-producers-v", v);
            Producer p = init(c, name("matrix-txn-producers-v", v));
            addPartition(c, p, own, (short) 3);
            long base = produceInTransaction(c, p, own, 3);
            assertThat(describeProducers(c, own, v).get(0).activeProducers()).singleElement().satisfies(s -> {
                assertThat(s.producerId()).isEqualTo(p.producerId());
                assertThat(s.producerEpoch()).isEqualTo(p.epoch());
                assertThat(s.lastSequence()).isEqualTo(2);
                assertThat(s.lastTimestamp()).isPositive();
                assertThat(s.coordinatorEpoch()).isEqualTo(-1);
                assertThat(s.currentTxnStartOffset()).isEqualTo(base);
            });
            end(c, p, false, (short) 3);
        });
        cases.put(ApiKeys.WRITE_TXN_MARKERS, (c, v) -> {
            String own = ownTopic(c, "matrix-markers-v", v);
            Producer p = init(c, name("matrix-txn-markers-v", v));
            addPartition(c, p, own, (short) 3);
            produceInTransaction(c, p, own, 2);
            WriteTxnMarkersRequestData.WritableTxnMarker marker = new WriteTxnMarkersRequestData.WritableTxnMarker()
                    .setProducerId(p.producerId()).setProducerEpoch(p.epoch()).setCoordinatorEpoch(0)
                    .setTransactionResult(false);
            marker.topics().add(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(own)
                    .setPartitionIndexes(List.of(0, 9)));
            WriteTxnMarkersResponse r = c.call(ApiKeys.WRITE_TXN_MARKERS, v,
                    new WriteTxnMarkersRequestData().setMarkers(List.of(marker)));
            assertThat(r.data().markers()).singleElement().satisfies(m -> {
                assertThat(m.producerId()).isEqualTo(p.producerId());
                assertThat(m.topics()).singleElement().satisfies(t -> assertThat(t.partitions())
                        .extracting(WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult::errorCode)
                        .containsExactly(Errors.NONE.code(), Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
            });
            // the partition's transaction ended with the marker, by the coordinator epoch it carried
            assertThat(describeProducers(c, own, (short) 0).get(0).activeProducers()).singleElement()
                    .satisfies(s -> {
                        assertThat(s.currentTxnStartOffset()).isEqualTo(-1);
                        assertThat(s.coordinatorEpoch()).isZero();
                    });
            end(c, p, false, (short) 3);
        });
    }
}
