package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.gateway.KafkaShareStateLog;
import io.pier.it.share.ShareClients;
import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * Three gateway nodes over one upstream (issue 16): they split the state partitions among them
 * with Kafka's group protocol on the upstream, each leads the topic-partitions whose share state
 * it serves, and stock share consumers bootstrapped on all three are sent to the right node. When
 * a node stops during consumption, the others take its state over and consumption goes on: every
 * record is accepted, and no record is delivered again after its acceptance was confirmed.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class GatewayClusterIT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private final List<Pier> nodes = new ArrayList<>();

    private Pier startNode(int id) throws Exception {
        Pier node = Pier.builder().config("node.id", String.valueOf(id))
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                .config("pier.gateway.session.timeout.ms", "6000").start();
        nodes.add(node);
        return node;
    }

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    private String bootstrap() {
        StringBuilder out = new StringBuilder();
        nodes.forEach(n -> out.append(out.length() == 0 ? "" : ",").append(n.bootstrapServers()));
        return out.toString();
    }

    /** The gateway node leading each partition of {@code topic}, once all three lead some. */
    private Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        Map<Integer, Integer> out = new HashMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    /** How many of {@code values} ("o<partition>-<n>") each partition has, for failure messages. */
    private static Map<String, Integer> byPartition(Set<String> values) {
        Map<String, Integer> out = new java.util.TreeMap<>();
        values.forEach(v -> out.merge(v.substring(0, v.indexOf('-')), 1, Integer::sum));
        return out;
    }

    /** The group's members with their assignments, and its start offsets, for failure messages. */
    private static String groupState(ShareClients clients, String group) {
        try (Admin admin = clients.admin()) {
            StringBuilder out = new StringBuilder();
            admin.describeShareGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).members()
                    .forEach(m -> out.append(m.clientId()).append(m.assignment().topicPartitions()).append(' '));
            out.append(" offsets ").append(admin.listShareGroupOffsets(Map.of(group,
                    new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                    .get(30, TimeUnit.SECONDS));
            return out.toString();
        } catch (Exception e) {
            return "unknown: " + e;
        }
    }

    @Test
    void shouldSplitLeadershipAndServeShareGroupsAcrossNodesThenSurviveANodeStopping() throws Exception {
        // Given three gateway nodes, and a 12-partition topic with 2,400 records
        startNode(1);
        startNode(2);
        startNode(3);
        ShareClients clients = new ShareClients(bootstrap());
        clients.createTopic("orders", 12);
        clients.setGroupConfig("billing", "share.auto.offset.reset", "earliest");
        for (int p = 0; p < 12; p++) {
            clients.produce("orders", p, "o" + p, 200);
        }

        // Then, once the nodes have joined their group, each is a broker of the cluster and leads partitions
        try (Admin admin = clients.admin()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> {
                        assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(Node::id)
                                .containsExactlyInAnyOrder(1, 2, 3);
                        assertThat(new HashSet<>(leaders(admin, "orders").values())).containsExactlyInAnyOrder(1, 2, 3);
                    });
        }

        // When three share consumers accept records, and node 3 stops halfway
        Map<String, Integer> accepted = new HashMap<>();
        Set<String> confirmed = new HashSet<>();
        List<String> redeliveredAfterConfirmation = new ArrayList<>();
        List<KafkaShareConsumer<String, String>> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(Map.of(
                        "bootstrap.servers", bootstrap(), "group.id", "billing",
                        "share.acknowledgement.mode", "explicit"), new StringDeserializer(), new StringDeserializer());
                c.subscribe(Set.of("orders"));
                consumers.add(c);
            }
            boolean stopped = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (accepted.size() < 2_400 && System.nanoTime() < deadline) {
                for (KafkaShareConsumer<String, String> c : consumers) {
                    Map<TopicPartition, List<String>> mine = new HashMap<>();
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                        if (confirmed.contains(r.value())) {
                            redeliveredAfterConfirmation.add(r.value());
                        }
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        mine.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>())
                                .add(r.value());
                    }
                    try {
                        // Confirmed: the records of each partition whose acknowledgement commit succeeded.
                        c.commitSync(Duration.ofSeconds(10)).forEach((tip, failure) -> {
                            List<String> done = mine.getOrDefault(tip.topicPartition(), List.of());
                            if (failure.isEmpty()) {
                                done.forEach(v -> accepted.merge(v, 1, Integer::sum));
                                confirmed.addAll(done);
                            }
                        });
                    } catch (RuntimeException e) {
                        // a commit that failed confirms nothing; those records come again
                    }
                }
                if (!stopped && accepted.size() >= 800) {
                    nodes.remove(2).close();
                    stopped = true;
                }
            }

            // Then every record was accepted, none delivered again once its acceptance was confirmed
            assertThat(stopped).isTrue();
            assertThat(accepted.keySet()).as("records accepted by partition: %s; group as the gateway sees it: %s",
                    byPartition(accepted.keySet()), groupState(clients, "billing")).hasSize(2_400);
            assertThat(redeliveredAfterConfirmation).isEmpty();
        } finally {
            consumers.forEach(KafkaShareConsumer::close);
        }
    }

    @Test
    void shouldStopANodeWhoseSessionTimeoutTheUpstreamRefuses() throws Exception {
        // Given the upstream's group.min.session.timeout.ms (Kafka's default, 6 s)
        // When a gateway node asks for 1 s
        CountDownLatch stopped = new CountDownLatch(1);
        Pier node = Pier.builder().config("node.id", "7")
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                .config("pier.gateway.session.timeout.ms", "1000")
                .onFatal(stopped::countDown).start();
        nodes.add(node);

        // Then it stops, instead of staying up serving no share state (the group refuses it)
        assertThat(stopped.await(60, TimeUnit.SECONDS)).as("the node stopped on its refused session timeout").isTrue();
    }

    @Test
    void shouldGiveUpAndTakeBackStatePartitionsAnotherWriterFencedInsteadOfStopping() throws Exception {
        // Given one gateway node serving a share group that accepted half of a partition's records
        CountDownLatch stopped = new CountDownLatch(1);
        nodes.add(Pier.builder().config("node.id", "1")
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                .config("pier.gateway.session.timeout.ms", "6000")
                .onFatal(stopped::countDown).start());
        ShareClients clients = new ShareClients(bootstrap());
        clients.createTopic("fenced", 1);
        clients.setGroupConfig("fenced-group", "share.auto.offset.reset", "earliest");
        clients.produce("fenced", 0, "f", 20);
        Set<String> confirmed = new HashSet<>();
        try (KafkaShareConsumer<String, String> c = clients.consumer("fenced-group", "explicit",
                "share.acquire.mode", "record_limit", "max.poll.records", "5")) {
            c.subscribe(Set.of("fenced"));
            acceptUntil(c, confirmed, 10);

            // When another writer opens every state partition with the node's transactional ids
            // (what a node does when the gateway group gives it a partition this node still writes)
            for (int p = 0; p < 8; p++) {
                KafkaShareStateLog.open(UPSTREAM.clientConfig(), "__pier_share_state", p, "__pier_share_state-" + p,
                        Duration.ofSeconds(30)).close();
            }

            // Then the node, fenced at its next write, gives its state up and takes it back
            // (the group's only member): the consumer goes on and every record is accepted
            acceptUntil(c, confirmed, 20);
        }
        assertThat(confirmed).hasSize(20);
        assertThat(stopped.getCount()).as("the node did not stop").isEqualTo(1);
    }

    /** ACCEPTs what {@code c} gets until {@code confirmed} holds {@code count} values, within 60 s. */
    private static void acceptUntil(KafkaShareConsumer<String, String> c, Set<String> confirmed, int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (confirmed.size() < count && System.nanoTime() < deadline) {
            Map<TopicPartition, List<String>> got = new HashMap<>();
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                c.acknowledge(r, AcknowledgeType.ACCEPT);
                got.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r.value());
            }
            try {
                c.commitSync(Duration.ofSeconds(10)).forEach((tip, failure) -> {
                    if (failure.isEmpty()) {
                        confirmed.addAll(got.getOrDefault(tip.topicPartition(), List.of()));
                    }
                });
            } catch (RuntimeException e) {
                // a commit that failed confirms nothing; those records come again
            }
        }
        assertThat(confirmed).as("records accepted").hasSizeGreaterThanOrEqualTo(count);
    }
}
