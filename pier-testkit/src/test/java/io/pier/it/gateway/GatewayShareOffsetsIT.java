package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;

/**
 * Admin's share-group offsets with three gateway nodes (issue 16): the group's coordinator
 * answers for every share-partition of the group, also those whose state another node serves
 * (it asks that node, as Kafka's group coordinator asks its share coordinators), and
 * AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups change the state where it is
 * served. Before the nodes asked each other, the coordinator listed only its own partitions and
 * refused to change the others'.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class GatewayShareOffsetsIT {
    private static final String TOPIC = "ledger";
    private static final String GROUP = "audit";
    private static final int PARTITIONS = 6;
    private static final int PER_PARTITION = 10;

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private final List<Pier> nodes = new ArrayList<>();

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    @Test
    void shouldDescribeAlterAndDeleteShareGroupOffsetsWhoseStateOtherNodesServe() throws Exception {
        // Given three gateway nodes leading the partitions of a topic between them, 10 records in each
        for (int id = 1; id <= 3; id++) {
            nodes.add(Pier.builder().config("node.id", String.valueOf(id))
                    .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                    .config("pier.gateway.session.timeout.ms", "6000").start());
        }
        ShareClients clients = new ShareClients(String.join(",", nodes.stream().map(Pier::bootstrapServers).toList()));
        clients.createTopic(TOPIC, PARTITIONS);
        clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest");
        for (int p = 0; p < PARTITIONS; p++) {
            clients.produce(TOPIC, p, "l" + p, PER_PARTITION);
        }
        try (Admin admin = clients.admin()) {
            Map<Integer, Integer> leaders = new HashMap<>();
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(Node::id)
                        .containsExactlyInAnyOrder(1, 2, 3);
                leaders.clear();
                leaders.putAll(leaders(admin));
                assertThat(new HashSet<>(leaders.values())).hasSizeGreaterThan(1).doesNotContain(-1);
            });

            // When a share consumer accepts every record, then leaves
            assertThat(consumeAll(clients, PARTITIONS * PER_PARTITION)).hasSize(PARTITIONS * PER_PARTITION);
            int coordinator = admin.describeShareGroups(List.of(GROUP)).all().get(30, TimeUnit.SECONDS).get(GROUP)
                    .coordinator().id();
            TopicPartition remote = partitionLedBy(leaders, n -> n != coordinator);
            TopicPartition local = partitionLedBy(leaders, n -> n == coordinator);

            // Then Admin lists the start offsets of all six partitions at their end, lag 0: also
            // those whose state the other nodes serve
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = awaitOffsets(admin, PARTITIONS);
            offsets.forEach((tp, info) -> {
                assertThat(info.startOffset()).as("start offset of %s", tp).isEqualTo(PER_PARTITION);
                assertThat(info.lag()).as("lag of %s", tp).contains(0L);
            });

            // When Admin moves the start of a partition another node serves, and of one the coordinator serves
            admin.alterShareGroupOffsets(GROUP, Map.of(remote, 4L, local, 7L)).all().get(30, TimeUnit.SECONDS);

            // Then both are listed at their new start, with the records past it as lag
            offsets = awaitOffsets(admin, PARTITIONS);
            assertThat(offsets.get(remote).startOffset()).isEqualTo(4);
            assertThat(offsets.get(remote).lag()).contains(6L);
            assertThat(offsets.get(local).startOffset()).isEqualTo(7);
            assertThat(offsets.get(local).lag()).contains(3L);
            // and a consumer gets exactly the records past the new starts again
            assertThat(consumeAll(clients, 9)).containsExactlyInAnyOrder(
                    value(remote, 4), value(remote, 5), value(remote, 6), value(remote, 7), value(remote, 8),
                    value(remote, 9), value(local, 7), value(local, 8), value(local, 9));

            // When Admin deletes the group's offsets of the topic
            admin.deleteShareGroupOffsets(GROUP, Set.of(TOPIC)).all().get(30, TimeUnit.SECONDS);

            // Then none is listed, and a consumer starts over at the earliest record of every partition
            assertThat(awaitOffsets(admin, 0)).isEmpty();
            assertThat(consumeAll(clients, PARTITIONS * PER_PARTITION)).hasSize(PARTITIONS * PER_PARTITION);

            // When Admin deletes the group itself, its state goes on every node: a new consumer starts over again
            admin.deleteShareGroups(List.of(GROUP)).all().get(30, TimeUnit.SECONDS);
            assertThat(awaitOffsets(admin, 0)).isEmpty();
            clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest"); // its settings may go with it
            assertThat(consumeAll(clients, PARTITIONS * PER_PARTITION)).hasSize(PARTITIONS * PER_PARTITION);
        }
    }

    private static String value(TopicPartition tp, int offset) {
        return "l" + tp.partition() + "-" + offset;
    }

    private static Map<Integer, Integer> leaders(Admin admin) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
        Map<Integer, Integer> out = new TreeMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    private static TopicPartition partitionLedBy(Map<Integer, Integer> leaders,
            java.util.function.IntPredicate node) {
        return leaders.entrySet().stream().filter(e -> node.test(e.getValue())).findFirst()
                .map(e -> new TopicPartition(TOPIC, e.getKey()))
                .orElseThrow(() -> new AssertionError("no partition led as wanted: leaders " + leaders));
    }

    /** The group's offsets once Admin lists {@code expected} partitions (state writes land after the commits). */
    private static Map<TopicPartition, SharePartitionOffsetInfo> awaitOffsets(Admin admin, int expected) {
        Map<TopicPartition, SharePartitionOffsetInfo> seen = new HashMap<>();
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            seen.clear();
            seen.putAll(admin.listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(GROUP).get(30, TimeUnit.SECONDS));
            assertThat(seen).as("offsets listed").hasSize(expected);
        });
        return seen;
    }

    /**
     * ACCEPTs what one share consumer gets until it has {@code expected} records and a second
     * more passes with nothing new, then closes it; returns the values, each once per delivery.
     */
    private static List<String> consumeAll(ShareClients clients, int expected) {
        List<String> got = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = clients.consumer(GROUP, "explicit")) {
            c.subscribe(Set.of(TOPIC));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long quietSince = 0;
            while (System.nanoTime() < deadline) {
                int before = got.size();
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    got.add(r.value());
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                if (got.size() > before) {
                    c.commitSync(Duration.ofSeconds(10));
                    quietSince = 0;
                } else if (got.size() >= expected) {
                    quietSince = quietSince == 0 ? System.nanoTime() : quietSince;
                    if (System.nanoTime() - quietSince > TimeUnit.SECONDS.toNanos(1)) {
                        break;
                    }
                }
            }
        }
        return got;
    }
}
