package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.common.ManualClock;
import io.pier.runtime.ManualAgents;
import io.pier.service.HandDrivenServices;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request handling end to end with no thread and no socket: Netty's EmbeddedChannel in front of the
 * real frame decoder, request handler and API handlers, over broker services driven by hand on a
 * manual clock. A long poll waits exactly until the clock passes its MaxWaitMs.
 */
class RequestHandlingTest {
    @TempDir
    Path dir;
    private HandDrivenServices broker;
    private ManualAgents agents;
    private ManualClock clock;
    private EmbeddedChannel channel;
    private int correlationId;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, 2);
        agents = broker.agents;
        clock = broker.clock;
        channel = HandDrivenPipeline.connection(HandDrivenPipeline.router(broker), 40_000);
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
        broker.close();
    }

    private RequestHeader send(AbstractRequest request) {
        return HandDrivenPipeline.send(channel, request, "embedded", ++correlationId);
    }

    /** Runs the agents and the channel's tasks until nothing moves, then the next response, or null. */
    private AbstractResponse next(RequestHeader header) {
        agents.runUntilIdle();
        channel.runPendingTasks();
        return HandDrivenPipeline.readResponse(channel, header);
    }

    private Uuid createTopic(String name) {
        CreateTopicsRequestData create = new CreateTopicsRequestData().setTimeoutMs(1_000);
        create.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(1)
                .setReplicationFactor((short) 1));
        RequestHeader header = send(new CreateTopicsRequest.Builder(create).build((short) 7));
        CreateTopicsResponse created = (CreateTopicsResponse) next(header);
        assertThat(created.data().topics().find(name).errorCode()).isEqualTo(Errors.NONE.code());
        return created.data().topics().find(name).topicId();
    }

    private static FetchRequest fetch(String topic, long offset, int maxWaitMs) {
        return fetch(topic, 0, offset, maxWaitMs);
    }

    private static FetchRequest fetch(String topic, int partition, long offset, int maxWaitMs) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1)
                .setMaxBytes(1 << 20);
        data.topics().add(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(offset)
                        .setPartitionMaxBytes(1 << 20))));
        return new FetchRequest(data, (short) 12);
    }

    @Test
    void shouldProduceAndFetchThroughTheWholeStackWithNoThreads() {
        ApiVersionsResponse versions = (ApiVersionsResponse) next(send(new ApiVersionsRequest(
                new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"), (short) 3)));
        assertThat(versions.data().apiKeys().find(ApiKeys.FETCH.id)).isNotNull();
        createTopic("embedded");

        ProduceRequestData produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1_000);
        produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("embedded").setPartitionData(
                List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                        MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(clock.wallMs(), null,
                                "a".getBytes()), new SimpleRecord(clock.wallMs(), null, "b".getBytes()))))));
        ProduceResponse produced = (ProduceResponse) next(send(new ProduceRequest(produce, (short) 12)));
        assertThat(produced.data().responses().iterator().next().partitionResponses().get(0).baseOffset()).isZero();

        FetchResponse fetched = (FetchResponse) next(send(fetch("embedded", 0, 500)));
        FetchResponseData.PartitionData partition = fetched.data().responses().get(0).partitions().get(0);
        assertThat(partition.highWatermark()).isEqualTo(2);
        assertThat(((MemoryRecords) partition.records()).records()).hasSize(2);
    }

    @Test
    void shouldStopReadingAClientWhoseResponsesPileUpUntilTheyDrain() {
        // The client reads nothing: the socket is full and Netty's outbound buffer past its high mark.
        channel.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        channel.runPendingTasks(); // Netty tells the pipeline of the change in a task of its own
        assertThat(channel.isWritable()).isFalse();
        assertThat(channel.config().isAutoRead()).as("no more requests read from it").isFalse();

        // A request already read is still answered, and answering it does not resume reading.
        ApiVersionsResponse versions = (ApiVersionsResponse) next(send(new ApiVersionsRequest(
                new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"), (short) 3)));
        assertThat(versions.data().errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(channel.config().isAutoRead()).isFalse();

        channel.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
        channel.runPendingTasks();
        assertThat(channel.config().isAutoRead()).as("read again once the buffer drained").isTrue();
    }

    @Test
    void shouldParkAFetchUntilMaxWaitPassesAndKeepLaterResponsesBehindIt() {
        createTopic("parked");

        RequestHeader fetchHeader = send(fetch("parked", 0, 60_000));
        RequestHeader versionsHeader = send(new ApiVersionsRequest(new ApiVersionsRequestData()
                .setClientSoftwareName("t").setClientSoftwareVersion("1"), (short) 3));
        assertThat(next(fetchHeader)).as("parked, and the ApiVersions answer waits behind it").isNull();

        clock.advance(59_999);
        assertThat(next(fetchHeader)).isNull();
        clock.advance(1);

        FetchResponse fetched = (FetchResponse) next(fetchHeader);
        assertThat(fetched.data().responses().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(next(versionsHeader)).isInstanceOf(ApiVersionsResponse.class);
    }

    @Test
    void shouldAnswerAFetchOfAPartitionTheTopicLacksAtOnceWithUnknownTopicOrPartition() {
        createTopic("one-partition");

        FetchResponse fetched = (FetchResponse) next(send(fetch("one-partition", 5, 0, 60_000)));

        FetchResponseData.PartitionData partition = fetched.data().responses().get(0).partitions().get(0);
        assertThat(partition.partitionIndex()).isEqualTo(5);
        assertThat(partition.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(partition.highWatermark()).isEqualTo(-1);
    }

    @Test
    void shouldRefuseATopicOfTwoBillionPartitionsBeforeCommittingIt() {
        // Given a CreateTopics asking for 1,965,948,157 partitions (found by RequestFuzzTest)
        CreateTopicsRequestData create = new CreateTopicsRequestData().setTimeoutMs(1_000);
        create.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("huge")
                .setNumPartitions(1_965_948_157).setReplicationFactor((short) 1));

        // Then it is refused, and no such topic exists
        CreateTopicsResponse created = (CreateTopicsResponse) next(send(new CreateTopicsRequest.Builder(create)
                .build((short) 7)));
        assertThat(created.data().topics().find("huge").errorCode()).isEqualTo(Errors.INVALID_PARTITIONS.code());
        createTopic("huge");
    }

    @Test
    void shouldRefuseAShareFetchWithAnUnknownAcquireModeBeforeItOpensASession() {
        // Given a ShareFetch v2 naming acquire mode 100 (found by RequestFuzzTest)
        Uuid topicId = createTopic("jobs");
        ShareFetchRequestData fetch = new ShareFetchRequestData().setGroupId("g").setMemberId(Uuid.randomUuid().toString())
                .setShareSessionEpoch(0).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(10)
                .setBatchSize(10).setShareAcquireMode((byte) 100);
        fetch.topics().add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId).setPartitions(
                new ShareFetchRequestData.FetchPartitionCollection(List.of(
                        new ShareFetchRequestData.FetchPartition().setPartitionIndex(0)).iterator())));

        // Then it is refused as malformed, naming the field, rather than failing once records are due
        ShareFetchResponse response = (ShareFetchResponse) next(send(new ShareFetchRequest(fetch, (short) 2)));
        assertThat(response.data().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(response.data().errorMessage()).contains("ShareAcquireMode");

        // And no share session was opened for the member: its next epoch finds none
        fetch.setShareSessionEpoch(1).setShareAcquireMode((byte) 0);
        ShareFetchResponse next = (ShareFetchResponse) next(send(new ShareFetchRequest(fetch, (short) 2)));
        assertThat(next.data().errorCode()).isEqualTo(Errors.SHARE_SESSION_NOT_FOUND.code());
    }
}
