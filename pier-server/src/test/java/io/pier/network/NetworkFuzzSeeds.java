package io.pier.network;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of {@link FrameFuzzTest} and {@link RequestFuzzTest} into the test
 * resources. Run by hand when an input format changes: {@code -Dpier.fuzz.seeds=write}.
 */
@EnabledIfSystemProperty(named = "pier.fuzz.seeds", matches = "write")
class NetworkFuzzSeeds {
    private static final Path FRAMES = Path.of("src/test/resources/io/pier/network/FrameFuzzTestInputs/frames");
    private static final Path REQUESTS = Path.of("src/test/resources/io/pier/network/RequestFuzzTestInputs/request");
    /** Replaced by the test topic's id when the input is sent: see {@link RequestFuzzTest#TOPIC_ID_PLACEHOLDER}. */
    private static final Uuid PLACEHOLDER = new Uuid(0x7777777777777777L, 0x7777777777777777L);
    private static final String MEMBER = "AAAAAAAAAAAAAAAAAAAAAA";

    @Test
    void writeSeeds() throws Exception {
        Files.createDirectories(FRAMES);
        Files.createDirectories(REQUESTS);
        try (FuzzedBroker broker = new FuzzedBroker()) {
            for (short[] api : broker.served) {
                ApiKeys key = ApiKeys.forId(api[0]);
                for (short v : new short[] {api[1], api[2]}) {
                    try {
                        ApiMessage m = ApiMessageType.fromApiKey(key.id).newRequest();
                        request(key.name.toLowerCase(Locale.ROOT) + "-v" + v + "-defaults", api, v, m);
                    } catch (RuntimeException e) {
                        // a default-valued body some version cannot carry: no seed for it
                    }
                }
            }
            List<short[]> served = broker.served;
            request("produce-v12", api(served, ApiKeys.PRODUCE), 12, produce((short) -1));
            request("produce-v12-acks0", api(served, ApiKeys.PRODUCE), 12, produce((short) 0));
            request("metadata-v12-topic", api(served, ApiKeys.METADATA), 12, new MetadataRequestData()
                    .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(FuzzedBroker.TOPIC))));
            CreateTopicsRequestData create = new CreateTopicsRequestData().setTimeoutMs(1_000);
            create.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("created").setNumPartitions(3)
                    .setReplicationFactor((short) 1));
            request("create-topics-v7", api(served, ApiKeys.CREATE_TOPICS), 7, create);
            request("fetch-v12", api(served, ApiKeys.FETCH), 12, new FetchRequestData().setReplicaId(-1)
                    .setMaxWaitMs(100).setMinBytes(1).setMaxBytes(1 << 20).setTopics(List.of(
                            new FetchRequestData.FetchTopic().setTopic(FuzzedBroker.TOPIC).setPartitions(List.of(
                                    new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                                            .setPartitionMaxBytes(1 << 20))))));
            request("list-offsets-v7-by-time", api(served, ApiKeys.LIST_OFFSETS), 7, new ListOffsetsRequestData()
                    .setReplicaId(-1).setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                            .setName(FuzzedBroker.TOPIC).setPartitions(List.of(
                                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                                            .setTimestamp(0))))));
            request("share-group-heartbeat-v1-join", api(served, ApiKeys.SHARE_GROUP_HEARTBEAT), 1,
                    new ShareGroupHeartbeatRequestData().setGroupId("g").setMemberId(MEMBER).setMemberEpoch(0)
                            .setSubscribedTopicNames(List.of(FuzzedBroker.TOPIC)));
            request("share-fetch-v1", api(served, ApiKeys.SHARE_FETCH), 1, shareFetch(0, false));
            request("share-fetch-v1-with-acks", api(served, ApiKeys.SHARE_FETCH), 1, shareFetch(1, true));
            request("share-acknowledge-v1", api(served, ApiKeys.SHARE_ACKNOWLEDGE), 1, shareAcknowledge());

            frame("apiversions-v3", 0, header(ApiKeys.API_VERSIONS, 3), versions());
            frame("apiversions-v3-read-byte-by-byte", 1, header(ApiKeys.API_VERSIONS, 3), versions());
            frame("apiversions-v99-kip511-fallback", 0, header(ApiKeys.API_VERSIONS, 99), versions());
            frame("produce-v12-in-7-byte-reads", 7, header(ApiKeys.PRODUCE, 12), body(produce((short) -1), 12));
            frame("metadata-v12", 0, header(ApiKeys.METADATA, 12), body(new MetadataRequestData().setTopics(
                    List.of(new MetadataRequestData.MetadataRequestTopic().setName(FuzzedBroker.TOPIC))), 12));
            ByteArrayOutputStream pipelined = new ByteArrayOutputStream();
            pipelined.write(0);
            for (int i = 0; i < 3; i++) {
                pipelined.write(sized(concat(header(ApiKeys.API_VERSIONS, 3), versions())));
            }
            Files.write(FRAMES.resolve("apiversions-pipelined"), pipelined.toByteArray());
            raw("size-negative", 0, ByteBuffer.allocate(12).putInt(-1).putInt(1).putInt(2).array());
            raw("size-int-max", 0, ByteBuffer.allocate(14).putInt(Integer.MAX_VALUE).putShort((short) 18)
                    .putShort((short) 3).putInt(1).putShort((short) -1).array());
            raw("size-over-limit", 0, ByteBuffer.allocate(8).putInt(FuzzedBroker.MAX_FRAME_BYTES + 1).putInt(0).array());
            byte[] apiVersions = concat(header(ApiKeys.API_VERSIONS, 3), versions());
            raw("truncated-frame", 0, ByteBuffer.allocate(4 + apiVersions.length - 5)
                    .putInt(apiVersions.length).put(apiVersions, 0, apiVersions.length - 5).array());
            byte[] badClientId = header(ApiKeys.METADATA, 12);
            ByteBuffer.wrap(badClientId).putShort(8, (short) -2);
            frame("client-id-length-minus-2", 0, badClientId, body(new MetadataRequestData(), 12));
            byte[] unknownKey = header(ApiKeys.API_VERSIONS, 3);
            ByteBuffer.wrap(unknownKey).putShort(0, (short) 999);
            frame("unknown-api-key", 0, unknownKey, versions());
        }
    }

    private static short[] api(List<short[]> served, ApiKeys key) {
        return RequestFuzzTest.api(served, key.id);
    }

    private static void request(String name, short[] api, int version, ApiMessage body) throws IOException {
        if (version < api[1] || version > api[2]) {
            throw new IllegalStateException(name + ": v" + version + " not served");
        }
        byte[] b = body(body, (short) version);
        byte[] out = new byte[3 + b.length];
        out[0] = (byte) (api[0] >> 8);
        out[1] = (byte) api[0];
        out[2] = (byte) (version - api[1]);
        System.arraycopy(b, 0, out, 3, b.length);
        Files.write(REQUESTS.resolve(name), out);
    }

    private static byte[] body(ApiMessage m, int version) {
        return MessageUtil.toByteBufferAccessor(m, (short) version).buffer().array();
    }

    private static byte[] header(ApiKeys key, int version) {
        RequestHeaderData h = new RequestHeaderData().setRequestApiKey(key.id).setRequestApiVersion((short) version)
                .setClientId("seed").setCorrelationId(7);
        return MessageUtil.toByteBufferAccessor(h, key.requestHeaderVersion((short) Math.min(version,
                key.latestVersion(true)))).buffer().array();
    }

    private static byte[] versions() {
        return body(new ApiVersionsRequestData().setClientSoftwareName("seed").setClientSoftwareVersion("1"), 3);
    }

    private static void frame(String name, int chunk, byte[] header, byte[] body) throws IOException {
        raw(name, chunk, sized(concat(header, body)));
    }

    private static void raw(String name, int chunk, byte[] stream) throws IOException {
        byte[] out = new byte[1 + stream.length];
        out[0] = (byte) chunk;
        System.arraycopy(stream, 0, out, 1, stream.length);
        Files.write(FRAMES.resolve(name), out);
    }

    private static byte[] sized(byte[] payload) {
        return ByteBuffer.allocate(4 + payload.length).putInt(payload.length).put(payload).array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static ProduceRequestData produce(short acks) {
        ProduceRequestData produce = new ProduceRequestData().setAcks(acks).setTimeoutMs(1_000);
        produce.topicData().add(new ProduceRequestData.TopicProduceData().setName(FuzzedBroker.TOPIC).setPartitionData(
                List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(
                        Compression.NONE, new SimpleRecord(1_700_000_000_000L, "k".getBytes(), "a".getBytes()),
                        new SimpleRecord(1_700_000_000_001L, null, "b".getBytes()))))));
        return produce;
    }

    private static ShareFetchRequestData shareFetch(int epoch, boolean acks) {
        ShareFetchRequestData.FetchPartition partition = new ShareFetchRequestData.FetchPartition().setPartitionIndex(0);
        if (acks) {
            partition.setAcknowledgementBatches(List.of(new ShareFetchRequestData.AcknowledgementBatch()
                    .setFirstOffset(0).setLastOffset(1).setAcknowledgeTypes(List.of((byte) 1))));
        }
        ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
        topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(PLACEHOLDER)
                .setPartitions(new ShareFetchRequestData.FetchPartitionCollection(List.of(partition).iterator())));
        return new ShareFetchRequestData().setGroupId("g").setMemberId(MEMBER).setShareSessionEpoch(epoch)
                .setMaxWaitMs(100).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(100).setBatchSize(100)
                .setTopics(topics);
    }

    private static ShareAcknowledgeRequestData shareAcknowledge() {
        ShareAcknowledgeRequestData.AcknowledgePartition partition = new ShareAcknowledgeRequestData.AcknowledgePartition()
                .setPartitionIndex(0).setAcknowledgementBatches(List.of(
                        new ShareAcknowledgeRequestData.AcknowledgementBatch().setFirstOffset(0).setLastOffset(1)
                                .setAcknowledgeTypes(List.of((byte) 1, (byte) 2))));
        ShareAcknowledgeRequestData.AcknowledgeTopicCollection topics =
                new ShareAcknowledgeRequestData.AcknowledgeTopicCollection();
        topics.add(new ShareAcknowledgeRequestData.AcknowledgeTopic().setTopicId(PLACEHOLDER).setPartitions(
                new ShareAcknowledgeRequestData.AcknowledgePartitionCollection(List.of(partition).iterator())));
        return new ShareAcknowledgeRequestData().setGroupId("g").setMemberId(MEMBER).setShareSessionEpoch(2)
                .setTopics(topics);
    }
}
