package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.RawKafkaClient.Closed;
import io.pier.it.RawKafkaClient.Frame;
import io.pier.it.RawKafkaClient.Received;
import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input from a client (reliability.md §7): each case gets an error response or a closed
 * connection within the raw client's read timeout, and afterwards a fresh connection is still
 * served (checked after every test).
 */
@Timeout(60)
class MalformedInputIT {
    private static final int SOCKET_REQUEST_MAX_BYTES = 1024 * 1024;
    private static final int MESSAGE_MAX_BYTES = 64 * 1024;
    private static final short PRODUCE_VERSION = 12;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "socket.request.max.bytes", Integer.toString(SOCKET_REQUEST_MAX_BYTES),
            "message.max.bytes", Integer.toString(MESSAGE_MAX_BYTES));

    private int correlationId = 100;

    @AfterEach
    void brokerStillServesNewConnections() throws IOException {
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            RequestHeader header = header(ApiKeys.API_VERSIONS, (short) 3);
            client.send(header, new ApiVersionsRequest.Builder((short) 3).build((short) 3));
            ApiVersionsResponse response = (ApiVersionsResponse) client.receiveResponse(header);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.NONE);
            assertThat(response.data().apiKeys().find(ApiKeys.PRODUCE.id)).isNotNull();
        }
    }

    // ---- framing ----

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE, SOCKET_REQUEST_MAX_BYTES + 1, Integer.MAX_VALUE})
    void shouldCloseConnectionWhenFrameSizeIsNegativeOrOverTheLimit(int size) throws IOException {
        ByteBuffer prefix = ByteBuffer.allocate(12).putInt(size).putInt(0x00120003).putInt(1);
        assertClosedAfterSending(prefix.array());
    }

    @Test
    void shouldCloseConnectionOnEmptyFrame() throws IOException {
        assertClosedAfterSending(new byte[] {0, 0, 0, 0});
    }

    @Test
    void shouldCloseConnectionOnHttpRequest() throws IOException {
        // "GET " read as a size is about 1.1 GB, far over the limit.
        assertClosedAfterSending("GET / HTTP/1.1\r\nHost: pier\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void shouldCloseConnectionOnFramedGarbage() throws IOException {
        byte[] garbage = new byte[24];
        Arrays.fill(garbage, (byte) 0xA5);
        assertClosedAfterSending(RawKafkaClient.frame(ByteBuffer.wrap(garbage)));
    }

    // ---- headers and versions ----

    @Test
    void shouldCloseConnectionOnUnknownApiKey() throws IOException {
        ByteBuffer header = RawKafkaClient.headerBytes(ApiKeys.METADATA, (short) 4, nextCorrelationId(), "raw");
        header.putShort(0, (short) 9999);
        assertClosedAfterSending(RawKafkaClient.frame(header));
    }

    @ParameterizedTest
    @ValueSource(shorts = {99, 14})
    void shouldCloseConnectionOnMetadataVersionOutsideTheAdvertisedRange(short version) throws IOException {
        ByteBuffer header = RawKafkaClient.headerBytes(ApiKeys.METADATA, version, nextCorrelationId(), "raw");
        assertClosedAfterSending(RawKafkaClient.frame(header));
    }

    @Test
    void shouldCloseConnectionOnProduceVersionBelowTheAdvertisedRange() throws IOException {
        ByteBuffer header = RawKafkaClient.headerBytes(ApiKeys.PRODUCE, (short) 2, nextCorrelationId(), "raw");
        assertClosedAfterSending(RawKafkaClient.frame(header));
    }

    @Test
    void shouldAnswerFutureApiVersionsWithV0UnsupportedVersionAndTheSupportedRanges() throws IOException {
        int correlation = nextCorrelationId();
        RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 99, "raw", correlation);
        ApiVersionsRequestData body = new ApiVersionsRequestData()
                .setClientSoftwareName("raw-client")
                .setClientSoftwareVersion("99.0");
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            client.sendFrame(RawKafkaClient.serialize(header, body, (short) 3));
            Received received = client.receive();
            assertThat(received).isInstanceOf(Frame.class);
            ByteBuffer bytes = ((Frame) received).bytes();
            assertThat(ResponseHeader.parse(bytes, (short) 0).correlationId()).isEqualTo(correlation);
            ApiVersionsResponse response = ApiVersionsResponse.parse(new ByteBufferAccessor(bytes), (short) 0);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.UNSUPPORTED_VERSION);
            ApiVersion apiVersions = response.data().apiKeys().find(ApiKeys.API_VERSIONS.id);
            assertThat(apiVersions).isNotNull();
            assertThat(apiVersions.minVersion()).isEqualTo((short) 0);
            assertThat(apiVersions.maxVersion()).isBetween((short) 3, (short) 98);
            assertThat(response.data().apiKeys().find(ApiKeys.METADATA.id)).isNotNull();
        }
    }

    @Test
    void shouldCloseConnectionWhenClientIdIsLongerThanTheFrame() throws IOException {
        RequestHeader header = header(ApiKeys.METADATA, (short) 4);
        ByteBuffer request = new MetadataRequest.Builder(List.of("a"), false, (short) 4).build((short) 4)
                .serializeWithHeader(header);
        // Header v1: api key (2), version (2), correlation id (4), then the client_id length.
        request.putShort(8, (short) 1000);
        assertClosedAfterSending(RawKafkaClient.frame(request));
    }

    @Test
    void shouldCloseConnectionWhenClientIdLengthIsBelowNull() throws IOException {
        // A null client_id (length -1) followed by a valid body; then the length is made -2.
        RequestHeader header = new RequestHeader(ApiKeys.METADATA, (short) 4, null, nextCorrelationId());
        ByteBuffer request = new MetadataRequest.Builder(List.of("a"), false, (short) 4).build((short) 4)
                .serializeWithHeader(header);
        assertThat(request.getShort(8)).isEqualTo((short) -1);
        request.putShort(8, (short) -2);
        assertClosedAfterSending(RawKafkaClient.frame(request));
    }

    // ---- bodies ----

    @Test
    void shouldCloseConnectionWhenMetadataTopicCountIsIntMaxWithATinyBody() throws IOException {
        ByteBuffer request = metadataV4WithNoTopics();
        // Body v4: topics array length (int32), then allow_auto_topic_creation (1 byte).
        request.putInt(request.limit() - 5, Integer.MAX_VALUE);
        assertClosedAfterSending(RawKafkaClient.frame(request));
    }

    @Test
    void shouldCloseConnectionWhenProduceTopicArrayLengthIsNegative() throws IOException {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(1000);
        RequestHeader header = header(ApiKeys.PRODUCE, (short) 8);
        ByteBuffer request = new ProduceRequest.Builder((short) 8, (short) 8, data).build((short) 8)
                .serializeWithHeader(header);
        // Body v8 ends with topic_data, a non-nullable int32-length array, here empty.
        request.putInt(request.limit() - 4, -5);
        assertClosedAfterSending(RawKafkaClient.frame(request));
    }

    @Test
    void shouldCloseConnectionOnTruncatedBody() throws IOException {
        RequestHeader header = header(ApiKeys.METADATA, (short) 4);
        ByteBuffer request = new MetadataRequest.Builder(List.of("some-topic"), false, (short) 4).build((short) 4)
                .serializeWithHeader(header);
        request.limit(request.limit() - 4);
        assertClosedAfterSending(RawKafkaClient.frame(request));
    }

    // ---- produce ----

    @Test
    void shouldRejectBatchWithCorruptCrcAndKeepTheLogReadable() throws Exception {
        String topic = createTopic("corrupt-crc");
        MemoryRecords good = MemoryRecords.withRecords(Compression.NONE, record("before"));
        assertThat(produce(topic, good, (short) 1).errorCode()).isEqualTo(Errors.NONE.code());

        MemoryRecords valid = MemoryRecords.withRecords(Compression.NONE, record("corrupt-me"));
        ByteBuffer bytes = ByteBuffer.allocate(valid.sizeInBytes()).put(valid.buffer().duplicate()).flip();
        int last = bytes.limit() - 1;
        bytes.put(last, (byte) (bytes.get(last) ^ 0x5A)); // inside the last record, covered by the CRC
        PartitionProduceResponse corrupt = produce(topic, MemoryRecords.readableRecords(bytes), (short) 1);
        assertThat(Errors.forCode(corrupt.errorCode())).isEqualTo(Errors.CORRUPT_MESSAGE);

        MemoryRecords after = MemoryRecords.withRecords(Compression.NONE, record("after"));
        PartitionProduceResponse appended = produce(topic, after, (short) 1);
        assertThat(appended.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(appended.baseOffset()).isEqualTo(1L);
        assertThat(readValues(topic, 2)).containsExactly("before", "after");
    }

    @Test
    void shouldRejectBatchOverMessageMaxBytes() throws Exception {
        String topic = createTopic("too-large");
        byte[] value = new byte[MESSAGE_MAX_BYTES + 1024];
        MemoryRecords big = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(1L, null, value));
        PartitionProduceResponse response = produce(topic, big, (short) 1);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        assertThat(latestOffset(topic)).isZero();
    }

    @Test
    void shouldRefuseControlBatchFromAClient() throws Exception {
        String topic = createTopic("control-batch");
        MemoryRecords marker = MemoryRecords.withEndTransactionMarker(4242L, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        PartitionProduceResponse response = produce(topic, marker, (short) 1);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_RECORD);
        assertThat(latestOffset(topic)).isZero();
    }

    @Test
    void shouldRefuseTransactionalBatchOutsideATransaction() throws Exception {
        // A producer id no coordinator gave out, sent without a transactional id (KIP-890 part 1)
        String topic = createTopic("transactional-batch");
        MemoryRecords txn = MemoryRecords.withTransactionalRecords(Compression.NONE, 4243L, (short) 0, 0,
                record("in-a-transaction"));
        PartitionProduceResponse response = produce(topic, txn, (short) 1);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(latestOffset(topic)).isZero();
    }

    @Test
    void shouldRejectInvalidRequiredAcks() throws Exception {
        String topic = createTopic("bad-acks");
        PartitionProduceResponse response = produce(topic,
                MemoryRecords.withRecords(Compression.NONE, record("x")), (short) 5);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.INVALID_REQUIRED_ACKS);
        assertThat(latestOffset(topic)).isZero();
    }

    @Test
    void shouldAnswerUnknownTopicOnProduceToAMissingTopic() throws IOException {
        PartitionProduceResponse response = produce("no-such-topic",
                MemoryRecords.withRecords(Compression.NONE, record("x")), (short) 1);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    // ---- fetch ----

    @ParameterizedTest
    @ValueSource(shorts = {12, 17})
    void shouldRefuseFetchFromAReplica(short version) throws Exception {
        String topic = createTopic("replica-fetch-v" + version);
        Map<TopicPartition, FetchRequest.PartitionData> partitions = Map.of(new TopicPartition(topic, 0),
                new FetchRequest.PartitionData(Uuid.ZERO_UUID, 0L, 0L, 1024, Optional.empty()));
        FetchRequest request = FetchRequest.Builder.forReplica(version, 1, 0L, 100, 0, partitions).build(version);
        assertThat(request.replicaId()).isEqualTo(1);
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            RequestHeader header = header(ApiKeys.FETCH, version);
            client.send(header, request);
            FetchResponse response = (FetchResponse) client.receiveResponse(header);
            assertThat(response.error()).isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED);
            assertThat(response.data().responses()).isEmpty();
        }
    }

    // ---- pipelining ----

    @Test
    void shouldAnswerPipelinedRequestsInRequestOrder() throws Exception {
        String topic = createTopic("pipeline");
        List<RequestHeader> headers = new ArrayList<>();
        List<AbstractRequest> requests = new ArrayList<>();
        // A parked fetch first: it completes last, yet its response must still come first.
        Map<TopicPartition, FetchRequest.PartitionData> partitions = Map.of(new TopicPartition(topic, 0),
                new FetchRequest.PartitionData(Uuid.ZERO_UUID, 0L, 0L, 1024, Optional.empty()));
        headers.add(header(ApiKeys.FETCH, (short) 12));
        requests.add(FetchRequest.Builder.forConsumer((short) 12, 800, 1, partitions).build((short) 12));
        for (int i = 0; i < 3; i++) {
            headers.add(header(ApiKeys.API_VERSIONS, (short) 3));
            requests.add(new ApiVersionsRequest.Builder((short) 3).build((short) 3));
            headers.add(header(ApiKeys.METADATA, (short) 12));
            requests.add(new MetadataRequest.Builder(List.of(topic), false, (short) 12).build((short) 12));
        }
        ByteBuffer all = ByteBuffer.allocate(64 * 1024);
        for (int i = 0; i < headers.size(); i++) {
            all.put(RawKafkaClient.frame(requests.get(i).serializeWithHeader(headers.get(i))));
        }
        all.flip();
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            client.sendRaw(Arrays.copyOf(all.array(), all.limit()));
            List<Integer> correlationIds = new ArrayList<>();
            for (int i = 0; i < headers.size(); i++) {
                Received received = client.receive();
                assertThat(received).isInstanceOf(Frame.class);
                correlationIds.add(((Frame) received).bytes().getInt(0));
            }
            assertThat(correlationIds).isSorted().doesNotHaveDuplicates()
                    .containsExactlyElementsOf(headers.stream().map(RequestHeader::correlationId).toList());
        }
    }

    // ---- helpers ----

    private RequestHeader header(ApiKeys key, short version) {
        return new RequestHeader(key, version, "raw-client", nextCorrelationId());
    }

    private int nextCorrelationId() {
        return correlationId++;
    }

    private static void assertClosedAfterSending(byte[] bytes) throws IOException {
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            try {
                client.sendRaw(bytes);
            } catch (IOException e) {
                return; // already closed (reset) while we were still writing
            }
            assertThat(client.awaitClose()).isInstanceOf(Closed.class);
        }
    }

    private ByteBuffer metadataV4WithNoTopics() {
        RequestHeader header = header(ApiKeys.METADATA, (short) 4);
        MetadataRequest request = new MetadataRequest.Builder(List.of(), false, (short) 4).build((short) 4);
        assertThat(request.data().topics()).isEmpty();
        return request.serializeWithHeader(header);
    }

    private static SimpleRecord record(String value) {
        return new SimpleRecord(System.currentTimeMillis(), null, value.getBytes(StandardCharsets.UTF_8));
    }

    private PartitionProduceResponse produce(String topic, MemoryRecords records, short acks) throws IOException {
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(5000);
        TopicProduceData topicData = new TopicProduceData().setName(topic);
        topicData.partitionData().add(new PartitionProduceData().setIndex(0).setRecords(records));
        data.topicData().add(topicData);
        ProduceRequest request = new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION, data)
                .build(PRODUCE_VERSION);
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers())) {
            RequestHeader header = header(ApiKeys.PRODUCE, PRODUCE_VERSION);
            client.send(header, request);
            ProduceResponse response = (ProduceResponse) client.receiveResponse(header);
            assertThat(response.data().responses()).hasSize(1);
            List<PartitionProduceResponse> partitions =
                    response.data().responses().iterator().next().partitionResponses();
            assertThat(partitions).hasSize(1);
            return partitions.get(0);
        }
    }

    private static Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        return p;
    }

    private static String createTopic(String name) throws Exception {
        try (Admin admin = Admin.create(clientProps())) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all().get();
        }
        return name;
    }

    private static long latestOffset(String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(clientProps())) {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    private static List<String> readValues(String topic, int expected) {
        Properties c = clientProps();
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            long deadline = System.currentTimeMillis() + 10_000;
            while (values.size() < expected && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            // One more short poll: anything beyond the expected records would show up here.
            consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        }
        return values;
    }
}
