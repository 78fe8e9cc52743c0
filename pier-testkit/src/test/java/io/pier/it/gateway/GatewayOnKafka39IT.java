package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;

/**
 * Gateway mode over an Apache Kafka 3.9 upstream (issue 16), a cluster with no share groups at all
 * (no {@code share.version} feature, no share-group APIs), run by {@link UpstreamKafka} from
 * Kafka 3.9.1's own jars, which pier-testkit's build copies into target/upstream-kafka/3.9.1.
 * Everything but share groups goes through the gateway to the 3.9 broker and is checked on it
 * directly; share groups are the gateway's, with their state kept on the 3.9 broker; a share
 * consumer sent to the 3.9 broker itself gets nowhere, and a KIP-848 consumer (which 3.9 does not
 * serve by default) fails the same way through the gateway as on the broker.
 *
 * <p>The forwarding tests run before the share-group ones: once a share-partition's mirror
 * long-polls the upstream broker (Fetch, max wait 200 ms) on the one connection the gateway has to
 * it, every request forwarded to that broker waits behind the poll, about 200 ms each, for as
 * long as the mirror runs (after its consumers have left too, on Kafka 4.4 as on 3.9), which made
 * this class three times as long. Nothing here measures time; the order only keeps it short.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayOnKafka39IT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().version("3.9.1").build();

    private static final Duration WAIT = Duration.ofSeconds(60);

    private static Pier gateway;

    @BeforeAll
    static void startGateway() throws Exception {
        gateway = Pier.builder().config("node.id", "5")
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers()).start();
    }

    @AfterAll
    static void stopGateway() {
        if (gateway != null) {
            gateway.close();
        }
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of("bootstrap.servers", bootstrap));
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
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

    private static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** Polls until {@code expected} records came or {@link #WAIT} passed. */
    private static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> consumer, int expected) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (out.size() < expected && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    /** Every record of the assigned partitions up to their end offsets (as the consumer's isolation level sees them). */
    private static List<ConsumerRecord<String, String>> readToEnd(KafkaConsumer<String, String> consumer,
            List<TopicPartition> tps) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        assertThat(tps).allSatisfy(tp -> assertThat(consumer.position(tp)).as("position of " + tp).isEqualTo(ends.get(tp)));
        return out;
    }

    private static Set<String> values(List<ConsumerRecord<String, String>> records) {
        Set<String> out = new HashSet<>();
        records.forEach(r -> out.add(r.value()));
        return out;
    }

    @Test
    @Order(1)
    void shouldRunTheUpstreamAsKafka39WithoutShareGroups() throws Exception {
        // The broker really is a 3.9 one: metadata.version 21 (3.9-IV0) at most, and no feature
        // (share.version, group.version, transaction.version) that 4.x brings.
        try (Admin direct = admin(UPSTREAM.bootstrapServers())) {
            FeatureMetadata features = direct.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
            assertThat(features.supportedFeatures().keySet()).containsExactlyInAnyOrder("kraft.version",
                    "metadata.version");
            assertThat(features.supportedFeatures().get("metadata.version").maxVersion()).isEqualTo((short) 21);
            assertThat(features.finalizedFeatures().get("metadata.version").maxVersionLevel()).isEqualTo((short) 21);
        }
    }

    @Test
    @Order(2)
    void shouldForwardTopicAdminIdempotentProduceAndAClassicGroupToKafka39() throws Exception {
        // Topic admin through the gateway: create with a setting, add a partition, delete another topic
        String topic = name("orders");
        String doomed = name("doomed");
        try (Admin viaGateway = admin(gateway.bootstrapServers()); Admin direct = admin(UPSTREAM.bootstrapServers())) {
            viaGateway.createTopics(List.of(new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "3600000")),
                    new NewTopic(doomed, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            viaGateway.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get(30, TimeUnit.SECONDS);
            viaGateway.deleteTopics(List.of(doomed)).all().get(30, TimeUnit.SECONDS);

            // (A KRaft broker serves metadata a moment after its controller answered: wait for it.)
            await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).ignoreExceptions().untilAsserted(() -> {
                TopicDescription real = direct.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                        .get(topic);
                assertThat(real.partitions()).hasSize(3);
                assertThat(direct.listTopics().names().get(30, TimeUnit.SECONDS)).contains(topic).doesNotContain(doomed);
                TopicDescription seen = viaGateway.describeTopics(List.of(topic)).allTopicNames()
                        .get(30, TimeUnit.SECONDS).get(topic);
                assertThat(seen.topicId()).isEqualTo(real.topicId());
                assertThat(seen.partitions()).hasSize(3).allSatisfy(p -> assertThat(p.leader().id()).isEqualTo(5));
            });
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = direct.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            assertThat(config.get("retention.ms").value()).isEqualTo("3600000");
            assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
        }

        // Idempotent produce through the gateway: 100 records to each partition
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                new TopicPartition(topic, 2));
        Set<String> sent = new HashSet<>();
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                for (int i = 0; i < 100; i++) {
                    acks.add(producer.send(new ProducerRecord<>(topic, p, "k" + i, "p" + p + "-" + i)));
                    sent.add("p" + p + "-" + i);
                }
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(30, TimeUnit.SECONDS);
            }
        }
        // Then the 3.9 broker has them, each partition from one idempotent producer whose last sequence is 99
        try (Admin direct = admin(UPSTREAM.bootstrapServers());
                KafkaConsumer<String, String> reader = consumer(UPSTREAM.bootstrapServers(), Map.of())) {
            for (TopicPartition tp : tps) {
                List<ProducerState> producers = direct.describeProducers(List.of(tp)).partitionResult(tp)
                        .get(30, TimeUnit.SECONDS).activeProducers();
                assertThat(producers).singleElement().satisfies(s -> {
                    assertThat(s.producerId()).isNotNegative();
                    assertThat(s.lastSequence()).isEqualTo(99);
                });
            }
            reader.assign(tps);
            reader.seekToBeginning(tps);
            List<ConsumerRecord<String, String>> got = readToEnd(reader, tps);
            assertThat(got).hasSize(300);
            assertThat(values(got)).isEqualTo(sent);
        }

        // A classic consumer group reads them through the gateway and commits
        String group = name("classic");
        try (KafkaConsumer<String, String> viaGateway = consumer(gateway.bootstrapServers(),
                Map.of(ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"))) {
            viaGateway.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> got = readAll(viaGateway, 300);
            assertThat(got).hasSize(300);
            assertThat(values(got)).isEqualTo(sent);
            viaGateway.commitSync(Duration.ofSeconds(30));
        }
        // Then the group's offsets are on the 3.9 broker, the same through the gateway
        Map<TopicPartition, OffsetAndMetadata> expected = new HashMap<>();
        tps.forEach(tp -> expected.put(tp, new OffsetAndMetadata(100)));
        try (Admin direct = admin(UPSTREAM.bootstrapServers()); Admin viaGateway = admin(gateway.bootstrapServers())) {
            Map<TopicPartition, OffsetAndMetadata> committed = direct.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            assertThat(committed.keySet()).isEqualTo(expected.keySet());
            assertThat(committed).allSatisfy((tp, o) -> assertThat(o.offset()).isEqualTo(100L));
            assertThat(viaGateway.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS)).isEqualTo(committed);
        }
    }

    @Test
    @Order(3)
    void shouldCommitAndAbortTransactionsOnKafka39ThroughTheGateway() throws Exception {
        // Given, through the gateway, a committed transaction of 50 records and an aborted one of 30
        String topic = name("txn");
        try (Admin viaGateway = admin(gateway.bootstrapServers())) {
            viaGateway.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = producer(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, name("tx")))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 50; i++) {
                var unused = producer.send(new ProducerRecord<>(topic, 0, null, "c" + i));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int i = 0; i < 30; i++) {
                var unused = producer.send(new ProducerRecord<>(topic, 0, null, "a" + i));
            }
            producer.flush();
            producer.abortTransaction();
        }
        List<TopicPartition> tp = List.of(new TopicPartition(topic, 0));

        // When read through the gateway with read_committed: exactly the committed records, up to
        // the end past both transactions (50 records, a marker, 30 records, a marker)
        try (KafkaConsumer<String, String> committed = consumer(gateway.bootstrapServers(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            committed.assign(tp);
            committed.seekToBeginning(tp);
            assertThat(committed.endOffsets(tp).get(tp.get(0))).isEqualTo(82L);
            List<ConsumerRecord<String, String>> got = readToEnd(committed, tp);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                expected.add("c" + i);
            }
            assertThat(got).extracting(ConsumerRecord::value).isEqualTo(expected);
        }
        // And read_uncommitted through the gateway sees the aborted records too: they are on the upstream
        try (KafkaConsumer<String, String> uncommitted = consumer(gateway.bootstrapServers(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"))) {
            uncommitted.assign(tp);
            uncommitted.seekToBeginning(tp);
            List<ConsumerRecord<String, String>> got = readToEnd(uncommitted, tp);
            assertThat(got).hasSize(80);
            assertThat(got.subList(50, 80)).extracting(ConsumerRecord::value).allMatch(v -> v.startsWith("a"));
        }
    }

    @Test
    @Order(6)
    void shouldServeShareGroupsOverKafka39WithTheirStateKeptThere() throws Exception {
        // Given 2 x 150 records on a 3.9 topic, produced through the gateway, and a group reading from the earliest
        String topic = name("jobs");
        String group = name("workers");
        try (Admin viaGateway = admin(gateway.bootstrapServers())) {
            viaGateway.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            viaGateway.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        }
        Set<String> sent = new HashSet<>();
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < 150; i++) {
                    acks.add(producer.send(new ProducerRecord<>(topic, p, null, "p" + p + "-" + i)));
                    sent.add("p" + p + "-" + i);
                }
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(30, TimeUnit.SECONDS);
            }
        }

        // When two share consumers of the group accept what they get, through the gateway
        Map<String, Integer> accepted = new HashMap<>();
        try (KafkaShareConsumer<String, String> a = shareConsumer(gateway.bootstrapServers(), group);
                KafkaShareConsumer<String, String> b = shareConsumer(gateway.bootstrapServers(), group)) {
            a.subscribe(Set.of(topic));
            b.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (accepted.size() < sent.size() && System.nanoTime() < deadline) {
                for (KafkaShareConsumer<String, String> c : List.of(a, b)) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        accepted.merge(r.value(), 1, Integer::sum);
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    c.commitSync(Duration.ofSeconds(10));
                }
            }
        }
        // Then every record was delivered and accepted exactly once
        assertThat(accepted.keySet()).isEqualTo(sent);
        assertThat(accepted).allSatisfy((value, times) -> assertThat(times).as(value).isEqualTo(1));

        // And the state is on the 3.9 broker: the group's setting in the compacted config topic,
        // the share-partition state in the delete-policy state topic, written in committed transactions
        try (Admin direct = admin(UPSTREAM.bootstrapServers());
                KafkaConsumer<String, String> reader = consumer(UPSTREAM.bootstrapServers(),
                        Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            Map<String, TopicDescription> internal = direct.describeTopics(List.of("__pier_share_state",
                    "__pier_group_configs")).allTopicNames().get(30, TimeUnit.SECONDS);
            assertThat(internal.get("__pier_share_state").partitions()).hasSize(8);
            assertThat(internal.get("__pier_group_configs").partitions()).hasSize(1);
            ConfigResource state = new ConfigResource(ConfigResource.Type.TOPIC, "__pier_share_state");
            ConfigResource configs = new ConfigResource(ConfigResource.Type.TOPIC, "__pier_group_configs");
            Map<ConfigResource, Config> described = direct.describeConfigs(List.of(state, configs)).all()
                    .get(30, TimeUnit.SECONDS);
            assertThat(described.get(state).get("cleanup.policy").value()).isEqualTo("delete");
            assertThat(described.get(configs).get("cleanup.policy").value()).isEqualTo("compact");

            TopicPartition configPartition = new TopicPartition("__pier_group_configs", 0);
            reader.assign(List.of(configPartition));
            reader.seekToBeginning(List.of(configPartition));
            assertThat(readToEnd(reader, List.of(configPartition))).filteredOn(r -> group.equals(r.key()))
                    .extracting(ConsumerRecord::value).containsExactly("share.auto.offset.reset=earliest\n");

            List<TopicPartition> stateTps = new ArrayList<>();
            for (int p = 0; p < 8; p++) {
                stateTps.add(new TopicPartition("__pier_share_state", p));
            }
            reader.assign(stateTps);
            reader.seekToBeginning(stateTps);
            assertThat(readToEnd(reader, stateTps)).as("committed share-state records").isNotEmpty();
        }
    }

    @Test
    @Order(7)
    void shouldRedeliverAReleasedRecordWithDeliveryCountTwoOverKafka39() throws Exception {
        String topic = name("retries");
        String group = name("retrying");
        try (Admin viaGateway = admin(gateway.bootstrapServers())) {
            viaGateway.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            viaGateway.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            producer.send(new ProducerRecord<>(topic, 0, null, "job")).get(30, TimeUnit.SECONDS);
        }
        // The first delivery is released, the second accepted
        List<String> deliveries = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(gateway.bootstrapServers(), group)) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (deliveries.size() < 2 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    deliveries.add(r.value() + "@" + r.offset() + "#" + r.deliveryCount().orElseThrow());
                    consumer.acknowledge(r, deliveries.size() == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                }
                consumer.commitSync(Duration.ofSeconds(10));
            }
        }
        assertThat(deliveries).containsExactly("job@0#1", "job@0#2");
    }

    /** Polls until a poll throws (bounded by {@link #WAIT}); the throwable, or null if none did. */
    private static Throwable firstPollFailure(java.util.function.Consumer<Duration> poll) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Throwable failure = null;
        while (failure == null && System.nanoTime() < deadline) {
            failure = catchThrowable(() -> poll.accept(Duration.ofMillis(200)));
        }
        return failure;
    }

    @Test
    @Order(5)
    void shouldFailAShareConsumerPointedAtKafka39Itself() {
        // A stock share consumer sent to the 3.9 broker directly: it has no ShareGroupHeartbeat API,
        // so the consumer's first poll fails (what works through the gateway is the gateway's)
        try (KafkaShareConsumer<String, String> direct = shareConsumer(UPSTREAM.bootstrapServers(), name("direct"))) {
            direct.subscribe(Set.of("anything"));
            assertThat(firstPollFailure(direct::poll)).isInstanceOf(UnsupportedVersionException.class)
                    .hasMessage("The cluster does not support the share group protocol using ShareGroupHeartbeat API"
                            + " version 1 or later. This version of the API was introduced in Apache Kafka v4.1.");
        }
    }

    @Test
    @Order(4)
    void shouldRefuseAConsumerProtocolGroupThroughTheGatewayAsKafka39Does() throws Exception {
        // Kafka 3.9 serves classic groups only (its default group.coordinator.rebalance.protocols):
        // a KIP-848 consumer fails the same way through the gateway as on the 3.9 broker itself
        String topic = name("kip848");
        try (Admin viaGateway = admin(gateway.bootstrapServers())) {
            viaGateway.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        String expected = "The cluster does not support the new CONSUMER group protocol. Set group.protocol=classic"
                + " on the consumer configs to revert to the CLASSIC protocol until the cluster is upgraded.";
        for (String bootstrap : List.of(UPSTREAM.bootstrapServers(), gateway.bootstrapServers())) {
            try (KafkaConsumer<String, String> consumer = consumer(bootstrap, Map.of(ConsumerConfig.GROUP_ID_CONFIG,
                    name("g848"), ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer"))) {
                consumer.subscribe(List.of(topic));
                assertThat(firstPollFailure(consumer::poll)).as(bootstrap)
                        .isInstanceOf(UnsupportedVersionException.class).hasMessage(expected);
            }
        }
    }
}
