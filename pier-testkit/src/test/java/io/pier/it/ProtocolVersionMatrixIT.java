package io.pier.it;

import static io.pier.it.MatrixRequests.records;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DescribeAclsRequestData;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The protocol-version matrix: for every API and every version the broker advertises in
 * ApiVersions, a request built with kafka-clients' generated classes at that version goes over a
 * socket, and its response must parse at that version, carry no error, and mean what Kafka's
 * means (offsets, ids, coordinators as the version shapes them).
 *
 * <p>A handler that sets a field the version lacks makes kafka-clients refuse to write the
 * response; the broker then answers UNKNOWN_SERVER_ERROR, and this matrix fails on that cell.
 * Checked by hand once: with ListOffsets' leader epoch set at every version again, the cells
 * LIST_OFFSETS v1, v2 and v3 failed with UNKNOWN_SERVER_ERROR and v4-v10 passed.
 *
 * <p>{@code -Dpier.matrix.bootstrap=host:port} runs the same cells against another broker (the
 * reference Apache Kafka), for the APIs this matrix has a case for.
 */
@Timeout(180)
class ProtocolVersionMatrixIT {
    /** A per-run suffix, so a reused reference broker sees fresh names. */
    private static final String RUN = Long.toString(System.currentTimeMillis() % 10_000_000, 36);
    private static final String TOPIC = "matrix-" + RUN;
    private static final String TRIM_TOPIC = "matrix-trim-" + RUN;
    private static final int INITIAL_RECORDS = 5;
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "1",
            "group.initial.rebalance.delay.ms", "0");

    private static String bootstrap;
    private static Admin admin;
    private static Uuid topicId;
    private static int correlationId;

    /** One cell's exchange: may send set-up requests on the same connection before the one under test. */
    @FunctionalInterface
    interface Case {
        void run(Connection c, short version) throws Exception;
    }

    @BeforeAll
    static void createTopicsWithRecords() throws Exception {
        bootstrap = System.getProperty("pier.matrix.bootstrap", PIER.bootstrapServers());
        admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1), new NewTopic(TRIM_TOPIC, 1, (short) 1)))
                .all().get();
        topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < INITIAL_RECORDS * 4; i++) {
                sent.add(producer.send(new ProducerRecord<>(i < INITIAL_RECORDS ? TOPIC : TRIM_TOPIC, "k" + i, "v" + i)));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
    }

    @AfterAll
    static void closeAdmin() {
        if (admin != null) {
            admin.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyAdvertisedVersionIsServed() throws IOException {
        Map<ApiKeys, ApiVersion> advertised = advertised();
        Map<ApiKeys, Case> cases = cases();
        List<DynamicTest> tests = new ArrayList<>();
        if (!System.getProperties().containsKey("pier.matrix.bootstrap")) {
            tests.add(DynamicTest.dynamicTest("every advertised API has a case", () ->
                    assertThat(cases.keySet()).containsAll(advertised.keySet())));
        }
        for (ApiVersion range : advertised.values()) {
            ApiKeys key = ApiKeys.forId(range.apiKey());
            Case c = cases.get(key);
            if (c == null) {
                continue;
            }
            // Produce v0-v2 are advertised but not served, as on Kafka 4 (see producePreV3...).
            short writable = (short) Math.max(range.minVersion(), key.oldestVersion());
            for (short v = writable; v <= range.maxVersion(); v++) {
                short version = v;
                tests.add(DynamicTest.dynamicTest(key + " v" + v, () -> {
                    try (Connection connection = new Connection()) {
                        c.run(connection, version);
                    } catch (AssertionError e) {
                        throw new AssertionError(key + " v" + version + ": " + e.getMessage(), e);
                    }
                }));
            }
        }
        return tests.stream();
    }

    /**
     * Kafka 4 lists Produce from v0 though it serves v3+ (KAFKA-18659: librdkafka before 2.10
     * sends uncompressed batches unless Produce v0 is listed); a v0-v2 request, which
     * kafka-clients cannot even write, closes the connection instead of being answered.
     */
    @TestFactory
    Stream<DynamicTest> producePreV3IsAdvertisedButClosesTheConnection() throws IOException {
        ApiVersion produce = advertised().get(ApiKeys.PRODUCE);
        assertThat(produce.minVersion()).isZero();
        List<DynamicTest> tests = new ArrayList<>();
        for (short v = produce.minVersion(); v < ApiKeys.PRODUCE.oldestVersion(); v++) {
            short version = v;
            tests.add(DynamicTest.dynamicTest("PRODUCE v" + v + " closes the connection", () -> {
                try (RawKafkaClient raw = RawKafkaClient.connect(bootstrap, READ_TIMEOUT)) {
                    raw.sendFrame(RawKafkaClient.headerBytes(ApiKeys.PRODUCE, version, ++correlationId, "pier-matrix"));
                    assertThat(raw.awaitClose()).isInstanceOf(RawKafkaClient.Closed.class);
                }
            }));
        }
        return tests.stream();
    }

    /** Metadata v10-v11 carry a topic id field but, as on Kafka, refuse a topic named only by id. */
    @TestFactory
    Stream<DynamicTest> metadataBeforeV12RefusesTopicIds() {
        return Stream.of((short) 10, (short) 11).map(v -> DynamicTest.dynamicTest("METADATA v" + v + " by id", () -> {
            try (Connection c = new Connection()) {
                MetadataRequestData byId = MatrixRequests.metadata(v, TOPIC, topicId);
                byId.topics().get(0).setName(null).setTopicId(topicId);
                MetadataResponse r = c.call(ApiKeys.METADATA, v, byId);
                assertThat(r.errorCounts()).containsOnlyKeys(Errors.INVALID_REQUEST);
            }
        }));
    }

    private static Map<ApiKeys, ApiVersion> advertised() throws IOException {
        try (Connection c = new Connection()) {
            ApiVersionsResponse r = c.call(ApiKeys.API_VERSIONS, (short) 3, MatrixRequests.apiVersions((short) 3));
            assertThat(r.data().errorCode()).isEqualTo(Errors.NONE.code());
            Map<ApiKeys, ApiVersion> out = new TreeMap<>();
            for (ApiVersion v : r.data().apiKeys()) {
                if (ApiKeys.hasId(v.apiKey())) {
                    out.put(ApiKeys.forId(v.apiKey()), v);
                }
            }
            return out;
        }
    }

    private static Map<ApiKeys, Case> cases() {
        Map<ApiKeys, Case> cases = new EnumMap<>(ApiKeys.class);
        cases.put(ApiKeys.API_VERSIONS, (c, v) -> {
            ApiVersionsResponse r = c.call(ApiKeys.API_VERSIONS, v, MatrixRequests.apiVersions(v));
            assertNoErrors(r);
            assertThat(r.data().apiKeys().find(ApiKeys.LIST_OFFSETS.id)).isNotNull();
        });
        cases.put(ApiKeys.METADATA, (c, v) -> {
            MetadataResponse r = c.call(ApiKeys.METADATA, v, MatrixRequests.metadata(v, TOPIC, topicId));
            assertNoErrors(r);
            assertThat(r.data().topics()).singleElement().satisfies(t -> {
                assertThat(t.name()).isEqualTo(TOPIC);
                assertThat(t.partitions()).singleElement().satisfies(p ->
                        assertThat(r.data().brokers().find(p.leaderId())).isNotNull());
                if (v >= 10) {
                    assertThat(t.topicId()).isEqualTo(topicId);
                }
            });
        });
        cases.put(ApiKeys.PRODUCE, (c, v) -> {
            ProduceResponse r = c.call(ApiKeys.PRODUCE, v,
                    MatrixRequests.produce(v, TOPIC, topicId, records("produce-v" + v, 2)));
            assertNoErrors(r);
            assertThat(r.data().responses()).singleElement().satisfies(t -> assertThat(t.partitionResponses())
                    .singleElement().satisfies(p -> assertThat(p.baseOffset()).isGreaterThanOrEqualTo(INITIAL_RECORDS)));
        });
        cases.put(ApiKeys.FETCH, (c, v) -> {
            FetchResponse r = c.call(ApiKeys.FETCH, v, MatrixRequests.fetch(v, TOPIC, topicId));
            assertNoErrors(r);
            FetchResponseData.PartitionData p = r.data().responses().get(0).partitions().get(0);
            assertThat(p.highWatermark()).isGreaterThanOrEqualTo(INITIAL_RECORDS);
            assertThat(FetchResponse.recordsOrFail(p).batches()).isNotEmpty();
            if (v >= 13) {
                assertThat(r.data().responses().get(0).topicId()).isEqualTo(topicId);
            }
        });
        cases.put(ApiKeys.LIST_OFFSETS, ProtocolVersionMatrixIT::listOffsets);
        cases.put(ApiKeys.DELETE_RECORDS, (c, v) -> {
            DeleteRecordsResponse r = c.call(ApiKeys.DELETE_RECORDS, v, MatrixRequests.deleteRecords(TRIM_TOPIC, v + 1));
            assertNoErrors(r);
            assertThat(r.data().topics().iterator().next().partitions().iterator().next().lowWatermark())
                    .isEqualTo(v + 1);
        });
        cases.put(ApiKeys.CREATE_TOPICS, (c, v) -> {
            CreateTopicsResponse r = c.call(ApiKeys.CREATE_TOPICS, v,
                    MatrixRequests.createTopics(name("matrix-create-v", v)));
            assertNoErrors(r);
            // Kafka answers a null message on success, not an empty one.
            assertThat(r.data().topics().iterator().next().errorMessage()).isNull();
        });
        cases.put(ApiKeys.DELETE_TOPICS, (c, v) -> {
            String topic = name("matrix-delete-v", v);
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            assertNoErrors(c.call(ApiKeys.DELETE_TOPICS, v, MatrixRequests.deleteTopics(v, topic)));
        });
        cases.put(ApiKeys.CREATE_PARTITIONS, (c, v) -> {
            String topic = name("matrix-grow-v", v);
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            CreatePartitionsResponse r = c.call(ApiKeys.CREATE_PARTITIONS, v,
                    MatrixRequests.createPartitions(topic, 2));
            assertNoErrors(r);
            assertThat(r.data().results().get(0).errorMessage()).isNull();
        });
        cases.put(ApiKeys.INIT_PRODUCER_ID, (c, v) -> {
            InitProducerIdResponse r = c.call(ApiKeys.INIT_PRODUCER_ID, v, MatrixRequests.initProducerId(v));
            assertNoErrors(r);
            assertThat(r.data().producerId()).isGreaterThanOrEqualTo(0);
        });
        cases.put(ApiKeys.FIND_COORDINATOR, ProtocolVersionMatrixIT::findCoordinator);
        cases.put(ApiKeys.DESCRIBE_CLUSTER, (c, v) -> {
            DescribeClusterResponse r = c.call(ApiKeys.DESCRIBE_CLUSTER, v, MatrixRequests.describeCluster());
            assertNoErrors(r);
            assertThat(r.data().brokers()).isNotEmpty();
        });
        cases.put(ApiKeys.DESCRIBE_CONFIGS, (c, v) -> {
            DescribeConfigsResponse r = c.call(ApiKeys.DESCRIBE_CONFIGS, v, MatrixRequests.describeTopicConfigs(TOPIC));
            assertNoErrors(r);
            assertThat(r.data().results().get(0).configs()).anySatisfy(e ->
                    assertThat(e.name()).isEqualTo("retention.ms"));
        });
        cases.put(ApiKeys.INCREMENTAL_ALTER_CONFIGS, (c, v) -> assertNoErrors(c.call(ApiKeys.INCREMENTAL_ALTER_CONFIGS,
                v, MatrixRequests.setTopicConfig(TOPIC, "retention.ms", Long.toString(604_800_000L + v)))));
        cases.put(ApiKeys.ALTER_CLIENT_QUOTAS, (c, v) -> {
            AlterClientQuotasResponse r = c.call(ApiKeys.ALTER_CLIENT_QUOTAS, v,
                    MatrixRequests.setClientQuota(name("matrix-quota-v", v), "producer_byte_rate", 1024 + v));
            assertThat(r.data().entries()).singleElement().satisfies(e -> assertThat(e.errorCode()).isZero());
        });
        cases.put(ApiKeys.DESCRIBE_CLIENT_QUOTAS, (c, v) -> {
            String client = name("matrix-quota-d", v);
            c.call(ApiKeys.ALTER_CLIENT_QUOTAS, (short) 1, MatrixRequests.setClientQuota(client, "consumer_byte_rate", 2048));
            DescribeClientQuotasResponse r = c.call(ApiKeys.DESCRIBE_CLIENT_QUOTAS, v,
                    MatrixRequests.describeClientQuota(client));
            assertThat(r.data().errorCode()).isZero();
            assertThat(r.data().entries()).singleElement().satisfies(e -> assertThat(e.values())
                    .singleElement().satisfies(q -> assertThat(q.value()).isEqualTo(2048.0)));
        });
        ShareCases.register(cases);
        GroupCases.register(cases);
        TxnCases.register(cases);
        SaslCases.register(cases);
        LogDirCases.register(cases);
        // The matrix broker runs without an authorizer: every ACL API answers SECURITY_DISABLED, as
        // Kafka does; AclIT covers them with ACLs on.
        cases.put(ApiKeys.CREATE_ACLS, (c, v) -> {
            CreateAclsResponse r = c.call(ApiKeys.CREATE_ACLS, v, new CreateAclsRequestData().setCreations(List.of(
                    new CreateAclsRequestData.AclCreation().setResourceType(ResourceType.TOPIC.code())
                            .setResourceName(TOPIC).setResourcePatternType(PatternType.LITERAL.code())
                            .setPrincipal("User:alice").setHost("*").setOperation(AclOperation.READ.code())
                            .setPermissionType(AclPermissionType.ALLOW.code()))));
            assertThat(r.results()).singleElement().satisfies(e ->
                    assertThat(e.errorCode()).isEqualTo(Errors.SECURITY_DISABLED.code()));
        });
        cases.put(ApiKeys.DESCRIBE_ACLS, (c, v) -> {
            DescribeAclsResponse r = c.call(ApiKeys.DESCRIBE_ACLS, v, new DescribeAclsRequestData()
                    .setResourceTypeFilter(ResourceType.ANY.code()).setPatternTypeFilter(PatternType.ANY.code())
                    .setOperation(AclOperation.ANY.code()).setPermissionType(AclPermissionType.ANY.code()));
            assertThat(r.data().errorCode()).isEqualTo(Errors.SECURITY_DISABLED.code());
        });
        cases.put(ApiKeys.DELETE_ACLS, (c, v) -> {
            DeleteAclsResponse r = c.call(ApiKeys.DELETE_ACLS, v, new DeleteAclsRequestData().setFilters(List.of(
                    new DeleteAclsRequestData.DeleteAclsFilter().setResourceTypeFilter(ResourceType.ANY.code())
                            .setPatternTypeFilter(PatternType.ANY.code()).setOperation(AclOperation.ANY.code())
                            .setPermissionType(AclPermissionType.ANY.code()))));
            assertThat(r.filterResults()).singleElement().satisfies(e ->
                    assertThat(e.errorCode()).isEqualTo(Errors.SECURITY_DISABLED.code()));
        });
        return cases;
    }

    private static void listOffsets(Connection c, short v) throws IOException {
        ListOffsetsResponse latest = c.call(ApiKeys.LIST_OFFSETS, v,
                MatrixRequests.listOffsets(v, TOPIC, ListOffsetsRequest.LATEST_TIMESTAMP));
        assertNoErrors(latest);
        var p = latest.data().topics().get(0).partitions().get(0);
        assertThat(p.offset()).isGreaterThanOrEqualTo(INITIAL_RECORDS);
        // The leader epoch exists only from v4; parsed at an older version it reads as the default.
        if (v >= 4) {
            assertThat(p.leaderEpoch()).isGreaterThanOrEqualTo(0);
        } else {
            assertThat(p.leaderEpoch()).isEqualTo(-1);
        }
        ListOffsetsResponse earliest = c.call(ApiKeys.LIST_OFFSETS, v,
                MatrixRequests.listOffsets(v, TOPIC, ListOffsetsRequest.EARLIEST_TIMESTAMP));
        assertNoErrors(earliest);
        assertThat(earliest.data().topics().get(0).partitions().get(0).offset()).isZero();
        ListOffsetsResponse byTime = c.call(ApiKeys.LIST_OFFSETS, v, MatrixRequests.listOffsets(v, TOPIC, 0L));
        assertNoErrors(byTime);
        assertThat(byTime.data().topics().get(0).partitions().get(0).offset()).isZero();
    }

    private static void findCoordinator(Connection c, short v) throws IOException {
        List<String> groups = List.of("matrix-group-a", "matrix-group-b");
        FindCoordinatorResponse r = c.call(ApiKeys.FIND_COORDINATOR, v, MatrixRequests.findCoordinator(v, groups));
        assertNoErrors(r);
        if (v < 4) {
            assertThat(r.data().nodeId()).isGreaterThanOrEqualTo(0);
            assertThat(r.data().port()).isPositive();
            assertThat(r.data().coordinators()).isEmpty();
        } else {
            assertThat(r.data().coordinators()).extracting(c2 -> c2.key()).containsExactlyElementsOf(groups);
            assertThat(r.data().coordinators()).allSatisfy(c2 -> assertThat(c2.port()).isPositive());
        }
    }

    static String name(String prefix, short version) {
        return prefix + version + "-" + RUN;
    }

    static void assertNoErrors(AbstractResponse response) {
        assertThat(response.errorCounts().keySet()).as("error codes in %s", response.data())
                .isSubsetOf(Errors.NONE);
    }

    static void setGroupConfig(String group, String name, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET)))).all().get();
    }

    static Uuid topicId() {
        return topicId;
    }

    static String topic() {
        return TOPIC;
    }

    /** A fresh socket to the broker for one cell; requests on it are answered in order. */
    static final class Connection implements AutoCloseable {
        private final RawKafkaClient client;

        Connection() throws IOException {
            client = RawKafkaClient.connect(bootstrap, READ_TIMEOUT);
        }

        /** Sends {@code body} at {@code version} and parses the response at that version. */
        @SuppressWarnings("unchecked")
        <T extends AbstractResponse> T call(ApiKeys key, short version, ApiMessage body) throws IOException {
            RequestHeader header = new RequestHeader(key, version, "pier-matrix", ++correlationId);
            client.sendFrame(RawKafkaClient.serialize(header, body, version));
            return (T) client.receiveResponse(header);
        }

        /** Joins {@code group} with a new member id and returns it with the epoch the broker gave. */
        Member join(String group) throws IOException {
            String memberId = Uuid.randomUuid().toString();
            ShareGroupHeartbeatResponse r = call(ApiKeys.SHARE_GROUP_HEARTBEAT, (short) 1,
                    MatrixRequests.joinShareGroup(group, memberId, TOPIC));
            assertNoErrors(r);
            return new Member(group, memberId, r.data().memberEpoch());
        }

        void leave(Member m) throws IOException {
            assertNoErrors(call(ApiKeys.SHARE_GROUP_HEARTBEAT, (short) 1,
                    MatrixRequests.leaveShareGroup(m.group(), m.memberId())));
        }

        /** Opens a share session and waits briefly for records; returns the first acquired range or null. */
        long[] openShareSession(Member m, short version) throws IOException {
            var data = MatrixRequests.shareFetch(m.group(), m.memberId(), topicId).setMaxWaitMs(2_000).setMinBytes(1);
            ShareFetchResponse r = call(ApiKeys.SHARE_FETCH, version, data);
            assertNoErrors(r);
            for (ShareFetchResponseData.ShareFetchableTopicResponse t : r.data().responses()) {
                for (ShareFetchResponseData.PartitionData p : t.partitions()) {
                    for (ShareFetchResponseData.AcquiredRecords a : p.acquiredRecords()) {
                        return new long[] {a.firstOffset(), a.lastOffset()};
                    }
                }
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            client.close();
        }
    }

    record Member(String group, String memberId, int epoch) {}
}
