package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.GroupProtocol;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * Gateway mode, first part (issue 16): a Pier node in front of a real Apache Kafka cluster
 * forwards what is not a share-group API, and stock clients pointed at the gateway behave as
 * against the upstream. Every record and offset is checked on the upstream itself too, through
 * clients connected to it directly, so the test shows the gateway forwards rather than keeps.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayForwardingIT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static Pier gateway;

    @BeforeAll
    static void startGateway() throws Exception {
        gateway = Pier.builder().config("node.id", "7")
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers()).start();
    }

    @AfterAll
    static void stopGateway() {
        if (gateway != null) {
            gateway.close();
        }
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    private static String topic(String prefix, int partitions) throws Exception {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = admin(gateway.bootstrapServers())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        return name;
    }

    private static KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>(extra);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, gateway.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, Map<String, Object> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** Reads {@code expected} records (bounded in time), in assign mode when no group is set. */
    private static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> consumer, int expected) {
        return readAll(consumer, expected, Duration.ofSeconds(60));
    }

    private static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> consumer, int expected,
            Duration within) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + within.toNanos();
        while (out.size() < expected && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    private static Set<String> values(List<ConsumerRecord<String, String>> records) {
        Set<String> out = new java.util.HashSet<>();
        records.forEach(r -> out.add(r.value()));
        return out;
    }

    @Test
    void shouldPresentItselfAsTheBrokerOfTheUpstreamCluster() throws Exception {
        String name = topic("meta", 3);
        try (Admin viaGateway = admin(gateway.bootstrapServers()); Admin direct = admin(UPSTREAM.bootstrapServers())) {
            DescribeClusterResult cluster = viaGateway.describeCluster();
            assertThat(cluster.clusterId().get()).isEqualTo(direct.describeCluster().clusterId().get());
            assertThat(cluster.nodes().get()).extracting(Node::id, Node::port)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(7, gateway.port()));

            // The topic the gateway created is the upstream's, with the upstream's topic id...
            TopicDescription seen = viaGateway.describeTopics(List.of(name)).allTopicNames().get().get(name);
            TopicDescription real = direct.describeTopics(List.of(name)).allTopicNames().get().get(name);
            assertThat(seen.topicId()).isEqualTo(real.topicId());
            assertThat(seen.partitions()).hasSize(3);
            // ...and every partition is led by the gateway, so clients send everything to it.
            seen.partitions().forEach(p -> {
                assertThat(p.leader().id()).isEqualTo(7);
                assertThat(p.leader().port()).isEqualTo(gateway.port());
            });
            assertThat(viaGateway.listTopics().names().get()).contains(name);
        }
    }

    @Test
    void shouldNotAdvertiseTheLogDirApisItHasNoLogsFor() throws Exception {
        // A gateway node keeps only mirrors of the upstream's partitions: DescribeLogDirs and
        // AlterReplicaLogDirs are not advertised, so the client refuses them itself.
        String name = topic("dirs", 1);
        try (Admin viaGateway = admin(gateway.bootstrapServers())) {
            assertThatThrownBy(() -> viaGateway.describeLogDirs(List.of(7)).allDescriptions().get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(UnsupportedVersionException.class);
            assertThatThrownBy(() -> viaGateway.alterReplicaLogDirs(Map.of(new TopicPartitionReplica(name, 0, 7),
                    "/any")).all().get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(UnsupportedVersionException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(GroupProtocol.class)
    void shouldProduceAndConsumeInAGroupThroughTheGatewayWithOffsetsKeptUpstream(GroupProtocol protocol)
            throws Exception {
        // Given 600 records produced through the gateway over 3 partitions
        String name = topic("pc-" + protocol.name().toLowerCase(java.util.Locale.ROOT), 3);
        int count = 600;
        Set<String> sent = new java.util.HashSet<>();
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                acks.add(producer.send(new ProducerRecord<>(name, "k" + i, "v" + i)));
                sent.add("v" + i);
            }
            for (java.util.concurrent.Future<?> ack : acks) {
                ack.get(30, TimeUnit.SECONDS); // every send acknowledged, none failed
            }
        }

        // Then the upstream itself has them all
        try (KafkaConsumer<String, String> direct = consumer(UPSTREAM.bootstrapServers(), Map.of())) {
            List<TopicPartition> tps = List.of(new TopicPartition(name, 0), new TopicPartition(name, 1),
                    new TopicPartition(name, 2));
            direct.assign(tps);
            direct.seekToBeginning(tps);
            assertThat(values(readAll(direct, count))).isEqualTo(sent);
        }

        // When a consumer group reads them through the gateway and commits
        String group = "g-" + UUID.randomUUID();
        try (KafkaConsumer<String, String> viaGateway = consumer(gateway.bootstrapServers(), Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol.name()))) {
            viaGateway.subscribe(List.of(name));
            List<ConsumerRecord<String, String>> got = readAll(viaGateway, count);
            assertThat(got).hasSize(count);
            assertThat(values(got)).isEqualTo(sent);
            viaGateway.commitSync(Duration.ofSeconds(30));
        }

        // Then the group and its offsets live on the upstream
        try (Admin direct = admin(UPSTREAM.bootstrapServers()); Admin viaGateway = admin(gateway.bootstrapServers())) {
            Map<TopicPartition, OffsetAndMetadata> committed = direct.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            assertThat(total).isEqualTo(count);
            assertThat(viaGateway.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS)).isEqualTo(committed);
            assertThat(viaGateway.listGroups().all().get(30, TimeUnit.SECONDS))
                    .anySatisfy(g -> assertThat(g.groupId()).isEqualTo(group));
        }
    }

    @Test
    void shouldCommitAndAbortTransactionsThroughTheGateway() throws Exception {
        // Given a transactional producer that commits one transaction and aborts the next
        String name = topic("txn", 2);
        try (KafkaProducer<String, String> producer = producer(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-" + UUID.randomUUID()))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 50; i++) {
                var unused = producer.send(new ProducerRecord<>(name, "c" + i));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int i = 0; i < 30; i++) {
                var unused = producer.send(new ProducerRecord<>(name, "a" + i));
            }
            producer.flush();
            producer.abortTransaction();
        }

        // When a read_committed consumer reads through the gateway
        List<TopicPartition> tps = List.of(new TopicPartition(name, 0), new TopicPartition(name, 1));
        try (KafkaConsumer<String, String> viaGateway = consumer(gateway.bootstrapServers(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            viaGateway.assign(tps);
            viaGateway.seekToBeginning(tps);
            List<ConsumerRecord<String, String>> got = readAll(viaGateway, 50);
            // Then it sees exactly the committed records, and the end is past both transactions
            assertThat(got).extracting(ConsumerRecord::value).hasSize(50).allMatch(v -> v.startsWith("c"));
            Map<TopicPartition, Long> ends = viaGateway.endOffsets(tps);
            assertThat(ends.values().stream().mapToLong(Long::longValue).sum())
                    .as("50 + 30 records and their markers").isGreaterThanOrEqualTo(82);
            assertThat(readAll(viaGateway, 1, Duration.ofSeconds(2))).as("nothing of the aborted transaction").isEmpty();
        }
        // And the upstream itself holds both transactions: the committed one readable, the aborted one not
        try (KafkaConsumer<String, String> direct = consumer(UPSTREAM.bootstrapServers(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            direct.assign(tps);
            direct.seekToBeginning(tps);
            assertThat(readAll(direct, 50)).extracting(ConsumerRecord::value).hasSize(50).allMatch(v -> v.startsWith("c"));
            assertThat(direct.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum())
                    .isGreaterThanOrEqualTo(82);
        }
    }
}
