package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.tools.ConfigCommand;
import org.apache.kafka.tools.TopicCommand;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;
import org.apache.kafka.tools.consumer.group.ShareGroupCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.it.admin.KafkaTool;
import io.pier.it.share.ShareClients;
import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * Kafka's own command-line tools (kafka-tools 4.4, the main classes kafka-topics.sh,
 * kafka-configs.sh, kafka-consumer-groups.sh and kafka-share-groups.sh start), run unchanged
 * against a gateway in front of a real Kafka upstream whose own share groups are off: what an
 * operator of the upstream does keeps working when pointed at the gateway. Topics and consumer
 * groups are the upstream's (checked against the upstream itself), share groups the gateway's.
 * Assertions are on exact printed values.
 *
 * <p>The share-group test runs last: a gateway serves clients before it has taken its share
 * state partitions over, and a share consumer fetching in that window is what {@link
 * GatewayRestartIT} tests on its own; here the tools are under test, not the take-over.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayKafkaToolsIT {
    private static final int NODE_ID = 5;

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static Pier gateway;
    private static ShareClients clients;

    @BeforeAll
    static void startGateway() throws Exception {
        gateway = Pier.builder().config("node.id", Integer.toString(NODE_ID))
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers()).start();
        clients = new ShareClients(gateway.bootstrapServers());
    }

    @AfterAll
    static void stopGateway() {
        if (gateway != null) {
            gateway.close();
        }
    }

    @Test
    @Order(1)
    void shouldCreateListAndDescribeUpstreamTopicsWithKafkaTopics() throws Exception {
        KafkaTool.Result created = topics("--create", "--topic", "gw-tool-topic", "--partitions", "3",
                "--replication-factor", "1");
        assertThat(created.exitCode()).as(created.err()).isZero();
        assertThat(created.out()).contains("Created topic gw-tool-topic.");

        // Listed once the upstream broker's metadata has it: CreateTopics is answered when the
        // upstream's controller has committed the topic, a moment before its broker serves it in
        // Metadata (as with Kafka itself, without a gateway).
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            KafkaTool.Result listed = topics("--list");
            assertThat(listed.exitCode()).isZero();
            assertThat(listed.out().lines()).contains("gw-tool-topic");
        });

        // The topic is the upstream's: its id as the upstream itself reports it, and every
        // partition led by the gateway node, as the gateway's Metadata presents it.
        String upstreamId;
        try (Admin direct = Admin.create(Map.of("bootstrap.servers", UPSTREAM.bootstrapServers()))) {
            upstreamId = direct.describeTopics(List.of("gw-tool-topic")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get("gw-tool-topic").topicId().toString();
        }
        // A gateway names no leader until its first split of the share state (a moment after it starts).
        Awaitility.await("the gateway leads the topic's partitions").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200)).until(() -> !topics("--describe", "--topic", "gw-tool-topic")
                        .out().contains("Leader: none"));
        KafkaTool.Result described = topics("--describe", "--topic", "gw-tool-topic");
        assertThat(described.exitCode()).isZero();
        assertThat(row(described.out(), "Topic:", "gw-tool-topic", "TopicId:"))
                .containsSubsequence("TopicId:", upstreamId, "PartitionCount:", "3", "ReplicationFactor:", "1");
        for (int p = 0; p < 3; p++) {
            assertThat(row(described.out(), "Topic:", "gw-tool-topic", "Partition:", Integer.toString(p)))
                    .containsSubsequence("Leader:", Integer.toString(NODE_ID));
        }
    }

    @Test
    @Order(2)
    void shouldDescribeAConsumerGroupThatConsumedThroughTheGatewayWithKafkaConsumerGroups() throws Exception {
        // Given 30 + 20 records, of which a consumer group read all and committed 25 and 20
        String topic = "gw-tool-orders";
        String group = "gw-tool-readers";
        clients.createTopic(topic, 2);
        clients.produce(topic, 0, "o", 30);
        clients.produce(topic, 1, "o", 20);
        Properties cp = new Properties();
        cp.put("bootstrap.servers", gateway.bootstrapServers());
        cp.put("group.id", group);
        cp.put("group.protocol", "consumer");
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            int[] seen = {0};
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                seen[0] += consumer.poll(Duration.ofMillis(100)).count();
                return seen[0] >= 50;
            });
            consumer.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(25),
                    new TopicPartition(topic, 1), new OffsetAndMetadata(20)), Duration.ofSeconds(30));

            // When kafka-consumer-groups lists and describes the group while its member is in it
            KafkaTool.Result list = consumerGroups("--list");
            KafkaTool.Result describe = consumerGroups("--describe", "--group", group);
            KafkaTool.Result members = consumerGroups("--describe", "--group", group, "--members");
            KafkaTool.Result state = consumerGroups("--describe", "--group", group, "--state");

            // Then it shows the committed offsets, the log ends and the lags...
            assertThat(list.exitCode()).isZero();
            assertThat(list.out().lines()).contains(group);
            assertThat(describe.exitCode()).isZero();
            assertThat(row(describe.out(), group, topic, "0").subList(3, 6)).containsExactly("25", "30", "5");
            assertThat(row(describe.out(), group, topic, "1").subList(3, 6)).containsExactly("20", "20", "0");
            // ...its one member with both partitions, and its state, with the gateway node as its
            // coordinator (the upstream's coordinator stays behind the gateway)
            assertThat(members.exitCode()).isZero();
            assertThat(row(members.out(), group)).last().isEqualTo("2");
            assertThat(state.exitCode()).isZero();
            List<String> stateRow = row(state.out(), group);
            assertThat(stateRow).contains("(" + NODE_ID + ")");
            assertThat(stateRow.subList(stateRow.size() - 2, stateRow.size())).containsExactly("Stable", "1");
        }

        // And the offsets it showed are the upstream's own
        try (Admin direct = Admin.create(Map.of("bootstrap.servers", UPSTREAM.bootstrapServers()))) {
            assertThat(direct.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
                    .isEqualTo(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(25),
                            new TopicPartition(topic, 1), new OffsetAndMetadata(20)));
        }
    }

    @Test
    @Order(3)
    void shouldDescribeAShareGroupConsumingThroughTheGatewayWithKafkaShareGroups() throws Exception {
        String topic = "gw-tool-jobs";
        String group = "gw-tool-workers";
        clients.createTopic(topic, 2);

        // kafka-configs: the share group reads from the beginning (a group config the gateway keeps)
        KafkaTool.Result altered = configs("--entity-type", "groups", "--entity-name", group, "--alter",
                "--add-config", "share.auto.offset.reset=earliest");
        assertThat(altered.exitCode()).as(altered.err()).isZero();
        assertThat(altered.out()).contains("Completed updating config for group " + group + ".");

        // Given 10 + 6 records, all accepted by one share consumer, which stays in the group
        clients.produce(topic, 0, "j", 10);
        clients.produce(topic, 1, "j", 6);
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int polls = 0; got.size() < 16 && polls < 300 && System.nanoTime() < deadline; polls++) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    got.add(r.topic() + "-" + r.partition() + ":" + r.value());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync(Duration.ofSeconds(10));
            }
            assertThat(got).hasSize(16).doesNotHaveDuplicates();

            // When kafka-share-groups lists and describes the group while its member is in it
            assertThat(shareGroups("--list").out().lines()).contains(group);
            KafkaTool.Result state = shareGroups("--describe", "--group", group, "--state");
            KafkaTool.Result members = shareGroups("--describe", "--group", group, "--members");

            // Then it is Stable with one member, which has both partitions, coordinated by the gateway
            assertThat(state.exitCode()).isZero();
            List<String> stateRow = row(state.out(), group);
            assertThat(stateRow).contains("(" + NODE_ID + ")");
            assertThat(stateRow.subList(stateRow.size() - 2, stateRow.size())).containsExactly("Stable", "1");
            assertThat(members.exitCode()).isZero();
            List<String> memberRow = row(members.out(), group);
            assertThat(memberRow.subList(memberRow.size() - 2, memberRow.size())).containsExactly("2", topic + ":0,1");
        }

        // And once the consumer has left, the group is Empty
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            List<String> stateRow = row(shareGroups("--describe", "--group", group, "--state").out(), group);
            assertThat(stateRow.subList(stateRow.size() - 2, stateRow.size())).containsExactly("Empty", "0");
        });

        // And once 4 more records are on partition 1, --describe (offsets by default) shows the
        // start offsets at the end of what was accepted and the lag of what is new
        clients.produce(topic, 1, "late", 4);
        KafkaTool.Result offsets = shareGroups("--describe", "--group", group);
        KafkaTool.Result explicitOffsets = shareGroups("--describe", "--group", group, "--offsets");
        assertThat(offsets.exitCode()).isZero();
        assertThat(explicitOffsets.out()).isEqualTo(offsets.out());
        assertThat(offsetCells(offsets.out(), group, topic, 0)).containsExactly("10", "0");
        assertThat(offsetCells(offsets.out(), group, topic, 1)).containsExactly("6", "4");
    }

    private static KafkaTool.Result topics(String... args) throws Exception {
        return KafkaTool.run(TopicCommand::main, withBootstrap(args));
    }

    private static KafkaTool.Result configs(String... args) throws Exception {
        return KafkaTool.run(ConfigCommand::main, withBootstrap(args));
    }

    private static KafkaTool.Result consumerGroups(String... args) throws Exception {
        return KafkaTool.run(ConsumerGroupCommand::main, withBootstrap(args));
    }

    private static KafkaTool.Result shareGroups(String... args) throws Exception {
        return KafkaTool.run(ShareGroupCommand::main, withBootstrap(args));
    }

    private static String[] withBootstrap(String... args) {
        String[] all = Arrays.copyOf(args, args.length + 2);
        all[args.length] = "--bootstrap-server";
        all[args.length + 1] = gateway.bootstrapServers();
        return all;
    }

    /** START-OFFSET and LAG of one partition in a {@code kafka-share-groups --describe --offsets} table. */
    private static List<String> offsetCells(String out, String group, String topic, int partition) {
        List<String> header = row(out, "GROUP", "TOPIC", "PARTITION");
        List<String> cells = row(out, group, topic, Integer.toString(partition));
        assertThat(cells).as("a cell under each header in:%n%s", out).hasSameSizeAs(header);
        return List.of(cells.get(header.indexOf("START-OFFSET")), cells.get(header.indexOf("LAG")));
    }

    /** The whitespace-separated cells of the one printed row that starts with {@code leading}. */
    private static List<String> row(String out, String... leading) {
        List<List<String>> rows = rows(out, leading);
        assertThat(rows).as("one row starting with %s in:%n%s", List.of(leading), out).hasSize(1);
        return rows.get(0);
    }

    private static List<List<String>> rows(String out, String... leading) {
        return out.lines()
                .map(l -> List.of(l.trim().split("\\s+")))
                .filter(cells -> cells.size() >= leading.length
                        && cells.subList(0, leading.length).equals(List.of(leading)))
                .toList();
    }
}
