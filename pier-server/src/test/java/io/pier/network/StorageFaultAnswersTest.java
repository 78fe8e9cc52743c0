package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.log.FaultyDisk;
import io.pier.service.HandDrivenServices;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What clients are answered between a storage fault and the end of the shutdown it causes. One
 * store's log fails (a {@link FaultyDisk#fill(Path)} folder) on a broker driven by hand, whose fatal handler
 * only takes note: the broker never gets as far as stopping, so every request sent afterwards
 * lands in that window. Each API must answer with a code its Kafka client retries on or takes in
 * its stride, as Kafka answers when the log behind it fails, never UNKNOWN_SERVER_ERROR, and never
 * confirm what is not durable.
 */
class StorageFaultAnswersTest {
    private static final String GROUP = "g";
    private static final byte ACCEPT = 1;

    @TempDir
    Path dir;
    private final FaultyDisk disk = new FaultyDisk();
    private HandDrivenServices broker;
    private EmbeddedChannel channel;
    private int correlationId;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, 2, null, Map.of(), disk);
        channel = HandDrivenPipeline.connection(HandDrivenPipeline.router(broker), 40_000);
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
        broker.close();
    }

    @Test
    void shouldAnswerOffsetCommitsNotCoordinatorOnceTheCommittedOffsetLogFailed() throws Exception {
        createTopic("t", 2);
        long producerId = initTransactionalProducer("tx", GROUP);
        assertThat(commit(5)).containsOnly(Errors.NONE);

        disk.fill(dir.resolve("consumer-offsets"));

        // The commit whose write fails: not durable, so not confirmed, and retried by the client.
        assertThat(commit(10)).as("the commit whose write failed").containsExactly(Errors.NOT_COORDINATOR,
                Errors.NOT_COORDINATOR);
        assertThat(broker.takeFatal()).containsExactly("writing the committed-offset log failed");
        // Commits that arrive after the failure, before the broker has stopped.
        assertThat(commit(11)).as("a commit after the failure").containsExactly(Errors.NOT_COORDINATOR,
                Errors.NOT_COORDINATOR);
        assertThat(txnCommit("tx", producerId, 12)).as("a transactional commit after the failure")
                .containsExactly(Errors.NOT_COORDINATOR, Errors.NOT_COORDINATOR);
        assertThat(offsetDelete()).as("an OffsetDelete after the failure").isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(deleteGroup()).as("a DeleteGroups after the failure").isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(committed()).as("what OffsetFetch shows").containsExactly(5L, 5L);
        assertThat(broker.takeFatal()).as("told once").isEmpty();
    }

    @Test
    void shouldAnswerShareFetchesAndAcknowledgementsWithCodesTheClientTakesOnceTheShareStateLogFailed()
            throws Exception {
        Uuid topicId = createTopic("s", 2);
        assertThat(broker.agents.await(broker.services.shareGroups().alterConfig(GROUP,
                Map.of("share.auto.offset.reset", "earliest"), false)).error()).isEqualTo(Errors.NONE);
        assertThat(produce("s", 0, 5)).isEqualTo(Errors.NONE);
        assertThat(produce("s", 1, 5)).isEqualTo(Errors.NONE);
        ShareFetchResponseData fetched = shareFetch(topicId, 0, List.of(0), -1);
        assertThat(partition(fetched, 0).acquiredRecords()).hasSize(1);
        assertThat(partition(fetched, 0).acquiredRecords().get(0).lastOffset()).isEqualTo(4);

        disk.fill(dir.resolve("share-state"));

        // ACCEPTs whose write fails are rolled back and refused (Kafka's answer when its share
        // coordinator cannot write), never confirmed.
        assertThat(shareAcknowledge(topicId, 1, 0, 0, 4)).as("ShareAcknowledge")
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(broker.takeFatal()).containsExactly("writing the share-state log failed");
        // A ShareFetch carrying the same ACCEPTs, and asking for a partition whose share state was
        // never written: its first start offset cannot be made durable, so nothing is handed out.
        ShareFetchResponseData after = shareFetch(topicId, 2, List.of(1), 0);
        assertThat(after.errorCode()).as("top-level error").isEqualTo(Errors.NONE.code());
        assertThat(partition(after, 0).acknowledgeErrorCode()).as("the piggybacked ACCEPTs")
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE.code());
        assertThat(partition(after, 1).errorCode()).as("the partition whose share state could not be written")
                .isEqualTo(Errors.KAFKA_STORAGE_ERROR.code());
        assertThat(partition(after, 1).acquiredRecords()).isEmpty();
    }

    @Test
    void shouldAnswerProduceKafkaStorageErrorOnceItsPartitionLogFailed() throws Exception {
        createTopic("p", 1);
        assertThat(produce("p", 0, 1)).isEqualTo(Errors.NONE);

        disk.fill(dir.resolve("logs").resolve("p-0"));

        assertThat(produce("p", 0, 1)).as("the produce whose append failed").isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(broker.takeFatal()).containsExactly("append to p-0 failed");
        // The log refuses on its own too; the broker's handler stops it once, whoever tells it.
        assertThat(produce("p", 0, 1)).as("a produce after the failure").isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(broker.takeFatal()).containsOnly("append to p-0 failed");
    }

    // ------------------------------------------------------------------ requests

    private Uuid createTopic(String name, int partitions) throws Exception {
        return broker.agents.await(broker.services.topics().create(name, partitions, Map.of(), false)).id();
    }

    private Errors produce(String topic, int partition, int records) {
        SimpleRecord[] batch = new SimpleRecord[records];
        for (int i = 0; i < records; i++) {
            batch[i] = new SimpleRecord(broker.clock.wallMs(), null, ("r" + i).getBytes());
        }
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1_000);
        data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(partition)
                        .setRecords(MemoryRecords.withRecords(Compression.NONE, batch)))));
        ProduceResponse response = (ProduceResponse) roundTrip(new ProduceRequest(data, (short) 12));
        return Errors.forCode(response.data().responses().iterator().next().partitionResponses().get(0).errorCode());
    }

    /** An OffsetCommit of {@code offset} for partitions 0 and 1 of "t" by a group with no members. */
    private List<Errors> commit(long offset) {
        OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(GROUP)
                .setGenerationIdOrMemberEpoch(-1).setMemberId("");
        OffsetCommitRequestData.OffsetCommitRequestTopic topic =
                new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t");
        for (int p = 0; p < 2; p++) {
            topic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(p)
                    .setCommittedOffset(offset));
        }
        data.topics().add(topic);
        OffsetCommitResponse response =
                (OffsetCommitResponse) roundTrip(OffsetCommitRequest.Builder.forTopicNames(data).build((short) 8));
        List<Errors> errors = new ArrayList<>();
        response.data().topics().forEach(t -> t.partitions().forEach(p -> errors.add(Errors.forCode(p.errorCode()))));
        return errors;
    }

    /** An OffsetDelete of partition 0 of "t": the group-level error. */
    private Errors offsetDelete() {
        OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection topics =
                new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
        topics.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName("t").setPartitions(
                List.of(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0))));
        OffsetDeleteResponse response = (OffsetDeleteResponse) roundTrip(new OffsetDeleteRequest.Builder(
                new OffsetDeleteRequestData().setGroupId(GROUP).setTopics(topics)).build((short) 0));
        return Errors.forCode(response.data().errorCode());
    }

    /** A DeleteGroups of the group: its error. */
    private Errors deleteGroup() {
        DeleteGroupsResponse response = (DeleteGroupsResponse) roundTrip(new DeleteGroupsRequest.Builder(
                new DeleteGroupsRequestData().setGroupsNames(List.of(GROUP))).build((short) 2));
        return Errors.forCode(response.data().results().find(GROUP).errorCode());
    }

    /** The committed offsets of partitions 0 and 1 of "t", -1 for none. */
    private List<Long> committed() {
        OffsetFetchRequestData data = new OffsetFetchRequestData().setGroups(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("t")
                                .setPartitionIndexes(List.of(0, 1))))));
        OffsetFetchResponse response = (OffsetFetchResponse) roundTrip(
                OffsetFetchRequest.Builder.forTopicNames(data, false).build((short) 9));
        List<Long> offsets = new ArrayList<>();
        response.data().groups().get(0).topics().forEach(t -> t.partitions()
                .forEach(p -> offsets.add(p.committedOffset())));
        return offsets;
    }

    /** A transactional producer (transaction version 1) whose transaction includes {@code group}'s offsets. */
    private long initTransactionalProducer(String transactionalId, String group) {
        InitProducerIdResponse init = (InitProducerIdResponse) roundTrip(new InitProducerIdRequest.Builder(
                new InitProducerIdRequestData().setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000)
                        .setProducerId(-1).setProducerEpoch((short) -1)).build((short) 4));
        assertThat(init.error()).isEqualTo(Errors.NONE);
        long producerId = init.data().producerId();
        AddOffsetsToTxnResponse added = (AddOffsetsToTxnResponse) roundTrip(new AddOffsetsToTxnRequest.Builder(
                new AddOffsetsToTxnRequestData().setTransactionalId(transactionalId).setProducerId(producerId)
                        .setProducerEpoch(init.data().producerEpoch()).setGroupId(group)).build((short) 3));
        assertThat(Errors.forCode(added.data().errorCode())).isEqualTo(Errors.NONE);
        return producerId;
    }

    private List<Errors> txnCommit(String transactionalId, long producerId, long offset) {
        TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData().setTransactionalId(transactionalId)
                .setGroupId(GROUP).setProducerId(producerId).setProducerEpoch((short) 0)
                .setGenerationIdOrMemberEpoch(-1).setMemberId("");
        TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic =
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("t");
        for (int p = 0; p < 2; p++) {
            topic.partitions().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                    .setPartitionIndex(p).setCommittedOffset(offset));
        }
        data.topics().add(topic);
        TxnOffsetCommitResponse response = (TxnOffsetCommitResponse) roundTrip(
                TxnOffsetCommitRequest.Builder.forTopicNames(data, false).build((short) 3));
        List<Errors> errors = new ArrayList<>();
        response.data().topics().forEach(t -> t.partitions().forEach(p -> errors.add(Errors.forCode(p.errorCode()))));
        return errors;
    }

    /**
     * A ShareFetch of member "m" at {@code epoch} adding {@code partitions} of the topic to its
     * session, with ACCEPTs of offsets 0-4 of {@code ackPartition} (none if negative).
     */
    private ShareFetchResponseData shareFetch(Uuid topicId, int epoch, List<Integer> partitions, int ackPartition) {
        List<ShareFetchRequestData.FetchPartition> list = new ArrayList<>();
        for (int p : partitions) {
            list.add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(p));
        }
        if (ackPartition >= 0) {
            list.add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(ackPartition)
                    .setAcknowledgementBatches(List.of(new ShareFetchRequestData.AcknowledgementBatch()
                            .setFirstOffset(0).setLastOffset(4).setAcknowledgeTypes(List.of(ACCEPT)))));
        }
        ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
        topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId)
                .setPartitions(new ShareFetchRequestData.FetchPartitionCollection(list.iterator())));
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(GROUP).setMemberId("m")
                .setShareSessionEpoch(epoch).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
                .setMaxRecords(100).setBatchSize(100).setTopics(topics);
        return ((ShareFetchResponse) roundTrip(new ShareFetchRequest.Builder(data).build((short) 2))).data();
    }

    /** A ShareAcknowledge of member "m" at {@code epoch}: ACCEPT {@code first..last} of {@code partition}. */
    private Errors shareAcknowledge(Uuid topicId, int epoch, int partition, long first, long last) {
        ShareAcknowledgeRequestData.AcknowledgeTopicCollection topics =
                new ShareAcknowledgeRequestData.AcknowledgeTopicCollection();
        topics.add(new ShareAcknowledgeRequestData.AcknowledgeTopic().setTopicId(topicId).setPartitions(
                new ShareAcknowledgeRequestData.AcknowledgePartitionCollection(List.of(
                        new ShareAcknowledgeRequestData.AcknowledgePartition().setPartitionIndex(partition)
                                .setAcknowledgementBatches(List.of(new ShareAcknowledgeRequestData.AcknowledgementBatch()
                                        .setFirstOffset(first).setLastOffset(last)
                                        .setAcknowledgeTypes(List.of(ACCEPT))))).iterator())));
        ShareAcknowledgeRequestData data = new ShareAcknowledgeRequestData().setGroupId(GROUP).setMemberId("m")
                .setShareSessionEpoch(epoch).setTopics(topics);
        ShareAcknowledgeResponse response = (ShareAcknowledgeResponse) roundTrip(
                new ShareAcknowledgeRequest.Builder(data).build((short) 2));
        assertThat(response.data().errorCode()).as("top-level error").isEqualTo(Errors.NONE.code());
        return Errors.forCode(response.data().responses().iterator().next().partitions().get(0).errorCode());
    }

    private static ShareFetchResponseData.PartitionData partition(ShareFetchResponseData data, int index) {
        assertThat(data.errorCode()).as("top-level error").isEqualTo(Errors.NONE.code());
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : data.responses()) {
            for (ShareFetchResponseData.PartitionData p : t.partitions()) {
                if (p.partitionIndex() == index) {
                    return p;
                }
            }
        }
        throw new AssertionError("partition " + index + " not in the answer: " + data);
    }

    /** Sends {@code request}, runs the agents and the channel until idle, and parses the answer. */
    private AbstractResponse roundTrip(AbstractRequest request) {
        RequestHeader header = HandDrivenPipeline.send(channel, request, "faults", ++correlationId);
        for (int i = 0; i < 5; i++) {
            broker.agents.runUntilIdle();
            channel.runPendingTasks();
        }
        AbstractResponse response = HandDrivenPipeline.readResponse(channel, header);
        assertThat(response).as("an answer to " + request.apiKey()).isNotNull();
        return response;
    }
}
