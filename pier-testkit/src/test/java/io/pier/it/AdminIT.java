package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConfigEntry.ConfigSource;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kafka-clients Admin API against one broker: topics, configs, partitions, offsets, records. */
@Timeout(120)
class AdminIT {
    private static final int NUM_PARTITIONS = 3;
    private static final String DEFAULT_RETENTION_MS = "604800000";

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", Integer.toString(NUM_PARTITIONS));

    private static Admin admin;

    @BeforeAll
    static void createAdmin() {
        admin = Admin.create(clientProps());
    }

    @AfterAll
    static void closeAdmin() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    // ---- topics ----

    @Test
    void shouldCreateListAndDescribeTopics() throws Exception {
        String topic = "described";
        CreateTopicsResult created = admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1)
                .configs(Map.of("retention.ms", "3600000"))));
        created.all().get();
        Uuid topicId = created.topicId(topic).get();
        assertThat(topicId).isNotEqualTo(Uuid.ZERO_UUID);
        assertThat(created.numPartitions(topic).get()).isEqualTo(2);

        assertThat(admin.listTopics().names().get()).contains(topic);

        TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        assertThat(description.topicId()).isEqualTo(topicId);
        assertThat(description.partitions()).extracting(TopicPartitionInfo::partition).containsExactly(0, 1);
        for (TopicPartitionInfo p : description.partitions()) {
            assertThat(p.leader()).isNotNull();
            assertThat(p.leader().id()).isEqualTo(1);
            assertThat(p.replicas()).extracting(n -> n.id()).containsExactly(1);
        }
    }

    @Test
    void shouldAnswerEveryOperationAsAuthorizedWithoutAnAuthorizer() throws Exception {
        String topic = "operations-open";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        // As Kafka without an authorizer: every operation the resource type has.
        assertThat(admin.describeTopics(List.of(topic), new DescribeTopicsOptions().includeAuthorizedOperations(true))
                .allTopicNames().get().get(topic).authorizedOperations())
                .containsExactlyInAnyOrder(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                        AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER,
                        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS);
        assertThat(admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
                .authorizedOperations().get())
                .containsExactlyInAnyOrder(AclOperation.CREATE, AclOperation.CLUSTER_ACTION,
                        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
                        AclOperation.ALTER, AclOperation.DESCRIBE);
        assertThat(admin.describeCluster().authorizedOperations().get()).isNull();
    }

    @Test
    void shouldRefuseCreatingATopicThatExists() throws Exception {
        admin.createTopics(List.of(new NewTopic("exists-already", 1, (short) 1))).all().get();
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("exists-already", 1, (short) 1))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(TopicExistsException.class);
    }

    @Test
    void shouldRefuseReplicationFactorAboveOne() {
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("replicated", 1, (short) 3))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidReplicationFactorException.class);
        assertThatThrownBy(() -> admin.describeTopics(List.of("replicated")).allTopicNames().get())
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void shouldGrowPartitionsAndRefuseShrinking() throws Exception {
        String topic = "growing";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
        assertThat(partitionCount(topic)).isEqualTo(3);

        assertThatThrownBy(() -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidPartitionsException.class);
        assertThat(partitionCount(topic)).isEqualTo(3);
    }

    @Test
    void shouldDeleteTopic() throws Exception {
        String topic = "doomed";
        admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
        assertThat(admin.listTopics().names().get()).contains(topic);

        admin.deleteTopics(List.of(topic)).all().get();

        assertThat(admin.listTopics().names().get()).doesNotContain(topic);
        assertThatThrownBy(() -> admin.describeTopics(List.of(topic)).allTopicNames().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void shouldRecreateADeletedTopicWithAFreshIdAndAnEmptyLog() throws Exception {
        String topic = "reborn";
        Uuid firstId = admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).topicId(topic).get();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, bytes("old" + i))).get();
            }
        }
        admin.deleteTopics(List.of(topic)).all().get();

        Uuid secondId = admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).topicId(topic).get();

        assertThat(secondId).isNotEqualTo(firstId);
        assertThat(partitionCount(topic)).isEqualTo(1);
        TopicPartition tp = new TopicPartition(topic, 0);
        assertThat(listOffset(tp, OffsetSpec.latest()).offset()).isZero();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            assertThat(producer.send(new ProducerRecord<>(topic, 0, null, bytes("new"))).get().offset()).isZero();
        }
    }

    @Test
    void shouldAutoCreateTopicWithNumPartitionsOnProducerSend() throws Exception {
        String topic = "auto-created";
        assertThat(admin.listTopics().names().get()).doesNotContain(topic);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            producer.send(new ProducerRecord<>(topic, bytes("hello"))).get();
        }
        assertThat(partitionCount(topic)).isEqualTo(NUM_PARTITIONS);
    }

    // ---- configs ----

    @Test
    void shouldDescribeTopicOverrideAndDefaultWithTheirSources() throws Exception {
        String topic = "configured";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                .configs(Map.of("retention.ms", "3600000")))).all().get();

        Config config = topicConfig(topic);
        assertThat(config.get("retention.ms").value()).isEqualTo("3600000");
        assertThat(config.get("retention.ms").source()).isEqualTo(ConfigSource.DYNAMIC_TOPIC_CONFIG);
        assertThat(config.get("segment.bytes").value()).isEqualTo("1073741824");
        assertThat(config.get("segment.bytes").source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
    }

    @Test
    void shouldDescribeBrokerConfigsByNodeId() throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
        Config config = admin.describeConfigs(List.of(broker)).all().get().get(broker);

        ConfigEntry numPartitions = config.get("num.partitions");
        assertThat(numPartitions.value()).isEqualTo(Integer.toString(NUM_PARTITIONS));
        assertThat(numPartitions.source()).isEqualTo(ConfigSource.STATIC_BROKER_CONFIG);
        ConfigEntry messageMaxBytes = config.get("message.max.bytes");
        assertThat(messageMaxBytes.value()).isEqualTo("1048588");
        assertThat(messageMaxBytes.source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
    }

    @Test
    void shouldSetAndDeleteTopicConfigIncrementally() throws Exception {
        String topic = "altered";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        assertThat(topicConfig(topic).get("retention.ms").value()).isEqualTo(DEFAULT_RETENTION_MS);

        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("retention.ms", "120000"), AlterConfigOp.OpType.SET)))).all().get();
        ConfigEntry set = topicConfig(topic).get("retention.ms");
        assertThat(set.value()).isEqualTo("120000");
        assertThat(set.source()).isEqualTo(ConfigSource.DYNAMIC_TOPIC_CONFIG);

        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)))).all().get();
        ConfigEntry deleted = topicConfig(topic).get("retention.ms");
        assertThat(deleted.value()).isEqualTo(DEFAULT_RETENTION_MS);
        assertThat(deleted.source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
    }

    @Test
    void shouldRefuseInvalidTopicConfigs() throws Exception {
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad-value", 1, (short) 1)
                        .configs(Map.of("retention.ms", "abc")))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("retention.ms");
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad-name", 1, (short) 1)
                        .configs(Map.of("no.such.config", "1")))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("no.such.config");
        assertThat(admin.listTopics().names().get()).doesNotContain("bad-value", "bad-name");

        String topic = "alter-invalid";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.ms", "abc"), AlterConfigOp.OpType.SET)))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class);
        assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                        new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(InvalidConfigurationException.class);
        ConfigEntry unchanged = topicConfig(topic).get("retention.ms");
        assertThat(unchanged.value()).isEqualTo(DEFAULT_RETENTION_MS);
        assertThat(unchanged.source()).isEqualTo(ConfigSource.DEFAULT_CONFIG);
    }

    // ---- offsets and records ----

    @Test
    void shouldListOffsetsEarliestLatestByTimestampAndMaxTimestamp() throws Exception {
        String topic = "timestamps";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition(topic, 0);
        // Two batches; the second holds two records, so lookups inside a batch are covered too.
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            producer.send(new ProducerRecord<>(topic, 0, 1_000L, null, bytes("t1000"))).get();
            Future<RecordMetadata> t5000 = producer.send(new ProducerRecord<>(topic, 0, 5_000L, null, bytes("t5000")));
            Future<RecordMetadata> t3000 = producer.send(new ProducerRecord<>(topic, 0, 3_000L, null, bytes("t3000")));
            producer.flush();
            t5000.get();
            t3000.get();
        }

        assertThat(listOffset(tp, OffsetSpec.earliest()).offset()).isZero();
        assertThat(listOffset(tp, OffsetSpec.latest()).offset()).isEqualTo(3);
        ListOffsetsResultInfo at500 = listOffset(tp, OffsetSpec.forTimestamp(500));
        assertThat(at500.offset()).isZero();
        assertThat(at500.timestamp()).isEqualTo(1_000L);
        ListOffsetsResultInfo at2000 = listOffset(tp, OffsetSpec.forTimestamp(2_000));
        assertThat(at2000.offset()).isEqualTo(1);
        assertThat(at2000.timestamp()).isEqualTo(5_000L);
        assertThat(listOffset(tp, OffsetSpec.forTimestamp(9_000)).offset()).isEqualTo(-1);
        ListOffsetsResultInfo max = listOffset(tp, OffsetSpec.maxTimestamp());
        assertThat(max.offset()).isEqualTo(1);
        assertThat(max.timestamp()).isEqualTo(5_000L);
    }

    @Test
    void shouldDeleteRecordsAndResetConsumersThatSeekBelowTheNewStart() throws Exception {
        String topic = "truncated";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, bytes("r" + i))).get();
            }
        }

        long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(2))).lowWatermarks().get(tp).get()
                .lowWatermark();
        assertThat(low).isEqualTo(2);
        assertThat(listOffset(tp, OffsetSpec.earliest()).offset()).isEqualTo(2);
        assertThat(listOffset(tp, OffsetSpec.latest()).offset()).isEqualTo(5);
        assertThatThrownBy(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(6))).all().get())
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(org.apache.kafka.common.errors.OffsetOutOfRangeException.class);
        assertThat(listOffset(tp, OffsetSpec.earliest()).offset()).isEqualTo(2);

        try (KafkaConsumer<byte[], byte[]> consumer = consumer("earliest")) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            List<ConsumerRecord<byte[], byte[]>> got = pollUntil(consumer, 3);
            assertThat(got).extracting(ConsumerRecord::offset).containsExactly(2L, 3L, 4L);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer("none")) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThatThrownBy(() -> consumer.poll(Duration.ofMillis(200)))
                            .isInstanceOf(OffsetOutOfRangeException.class));
        }
    }

    // ---- helpers ----

    private static Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        return p;
    }

    private static Properties producerProps() {
        Properties p = clientProps();
        p.put("acks", "all");
        p.put("linger.ms", "100");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        return p;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String autoOffsetReset) {
        Properties c = clientProps();
        c.put("auto.offset.reset", autoOffsetReset);
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(c);
    }

    private static List<ConsumerRecord<byte[], byte[]>> pollUntil(KafkaConsumer<byte[], byte[]> consumer, int count) {
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 10_000;
        while (got.size() < count && System.currentTimeMillis() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        return got;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int partitionCount(String topic) throws Exception {
        Collection<TopicPartitionInfo> partitions =
                admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
        return partitions.size();
    }

    private static Config topicConfig(String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(resource)).all().get().get(resource);
    }

    private static ListOffsetsResultInfo listOffset(TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
    }
}
