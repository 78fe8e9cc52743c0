package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.it.RawKafkaClient;
import io.pier.it.share.ShareClients;
import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * What a gateway node tells clients about the topic-partitions whose share state another node
 * serves (issue 16, several gateway nodes). Two findings of {@link GatewayNemesisIT}, each
 * reproduced here on its own (both fixed).
 *
 * <p><b>Offsets.</b> A group's coordinator answers DescribeShareGroupOffsets for every
 * share-partition of the group: from the state partitions it serves, and by asking the other
 * nodes for the rest ({@code PeerShareState}). A ShareFetch that reaches the coordinator for a
 * partition the other node leads (a client whose metadata is a moment old does this after every
 * move of a state partition) is answered NOT_LEADER_OR_FOLLOWER, as it should be; it must leave
 * the offsets answer as it was. It once made the coordinator list that partition with start
 * offset -1 (Admin: a null {@link SharePartitionOffsetInfo}; {@code kafka-share-groups --describe
 * --offsets} showed no offset, as for a partition the group never read): in the engine,
 * {@code SharePartitions.holder} added the key to its admin index ({@code stateKeys}) before
 * {@code load} found that the persister does not serve it. The stray ShareFetch is sent raw, with
 * a member id of its own, so the test does not depend on when a stock client's metadata goes
 * stale.
 *
 * <p><b>A node joining.</b> A node that has started but not yet had its first split of the state
 * partitions (a restart, or a node added) answered Metadata with itself as the only broker, and
 * once as the leader of every partition, while the other nodes went on serving them. A client
 * that read its metadata there dropped its connections to the other nodes: in
 * {@link GatewayNemesisIT} the consumers' acknowledgements to a node that never moved then failed
 * ("The server disconnected before a response was received") right after a restarted node came
 * up, and those records came back only when their lock ran out. It now holds Metadata and
 * DescribeCluster until its first split (at most 10 s), then describes the whole cluster.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayUnservedPartitionsIT {
    private static final String TOPIC = "ledger";
    private static final String GROUP = "auditors";
    private static final int PARTITIONS = 12;
    private static final int PER_PARTITION = 5;

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private final List<Pier> nodes = new ArrayList<>();

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    private Pier startNode(int id, String sessionTimeoutMs) throws Exception {
        Pier node = Pier.builder().config("node.id", String.valueOf(id))
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                .config("pier.gateway.session.timeout.ms", sessionTimeoutMs).start();
        nodes.add(node);
        return node;
    }

    @Test
    void shouldAnswerAJoiningNodesMetadataOnlyOnceItKnowsTheOtherNodes() throws Exception {
        // Given one gateway node serving every partition of a topic (its heartbeats, a fifth of
        // the session timeout, put the next node's first split a second or two away)
        Pier one = startNode(1, "6000");
        ShareClients viaOne = new ShareClients(one.bootstrapServers());
        viaOne.createTopic("ledger-joining", 4);
        try (Admin admin = viaOne.admin()) {
            // (a topic just created may be unknown to the upstream's metadata for a moment)
            Awaitility.await("node 1 leads every partition").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() ->
                            assertThat(leaders(admin, "ledger-joining")).containsOnlyKeys(0, 1, 2, 3)
                                    .allSatisfy((p, n) -> assertThat(n).isEqualTo(1)));
        }

        // When a second node starts, and a client asks it for the topic's metadata at once
        Pier two = startNode(2, "6000");
        MetadataResponse answer;
        try (RawKafkaClient raw = RawKafkaClient.connect(two.bootstrapServers())) {
            short version = ApiKeys.METADATA.latestVersion();
            RequestHeader header = new RequestHeader(ApiKeys.METADATA, version, "joining", 1);
            raw.send(header, new MetadataRequest.Builder(List.of("ledger-joining"), false).build(version));
            answer = (MetadataResponse) raw.receiveResponse(header);
        }

        // Then it answers once its first split is done: both nodes are brokers (a client told of
        // the new node alone would drop its connections to node 1, failing what is in flight
        // there), and every partition's leader is one of them or none yet (a partition on its
        // way from one node to the other)
        List<Integer> brokers = new ArrayList<>();
        answer.brokers().forEach(n -> brokers.add(n.id()));
        brokers.sort(null);
        assertThat(brokers).as("brokers per the new node").containsExactly(1, 2);
        Map<Integer, Integer> leaders = new TreeMap<>();
        answer.topicMetadata().forEach(t -> t.partitionMetadata().forEach(p ->
                leaders.put(p.partition(), p.leaderId.orElse(-1))));
        assertThat(leaders).as("leaders per the new node").containsOnlyKeys(0, 1, 2, 3)
                .allSatisfy((p, n) -> assertThat(n).isIn(-1, 1, 2));
    }

    @Test
    void shouldListEveryPartitionsOffsetsThroughTheCoordinatorAlsoAfterAStrayShareFetch() throws Exception {
        // Given two gateway nodes that split the topic's partitions, and a group that accepted every record
        Pier one = startNode(1, "6000");
        Pier two = startNode(2, "6000");
        ShareClients clients = new ShareClients(one.bootstrapServers() + "," + two.bootstrapServers());
        clients.createTopic(TOPIC, PARTITIONS);
        clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest");
        for (int p = 0; p < PARTITIONS; p++) {
            clients.produce(TOPIC, p, "p" + p, PER_PARTITION);
        }
        Map<Integer, Integer> leaders = new TreeMap<>();
        Uuid topicId;
        try (Admin admin = clients.admin()) {
            // settled: both nodes lead partitions, and the split is the same as a second ago (a
            // move while the consumer reads would send it astray before the test does)
            Awaitility.await("both nodes lead partitions").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                        assertThat(admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)).extracting(Node::id)
                                .containsExactlyInAnyOrder(1, 2);
                        Map<Integer, Integer> now = leaders(admin);
                        Map<Integer, Integer> before = new TreeMap<>(leaders);
                        leaders.clear();
                        leaders.putAll(now);
                        assertThat(new HashSet<>(now.values())).containsExactlyInAnyOrder(1, 2);
                        assertThat(now).isEqualTo(before);
                    });
            topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC)
                    .topicId();
        }
        acceptAll(clients);

        Pier coordinator;
        Set<TopicPartition> own = new TreeSet<>(java.util.Comparator.comparingInt(TopicPartition::partition));
        Set<TopicPartition> every = new TreeSet<>(java.util.Comparator.comparingInt(TopicPartition::partition));
        for (int p = 0; p < PARTITIONS; p++) {
            every.add(new TopicPartition(TOPIC, p));
        }
        int stray;
        try (Admin admin = clients.admin()) {
            int id = admin.describeShareGroups(List.of(GROUP)).all().get(10, TimeUnit.SECONDS).get(GROUP)
                    .coordinator().id();
            coordinator = nodes.get(id - 1);
            // the split must not have moved since the consumer read (nothing joined or left)
            assertThat(leaders(admin)).isEqualTo(leaders);
            leaders.forEach((p, n) -> {
                if (n == id) {
                    own.add(new TopicPartition(TOPIC, p));
                }
            });
            stray = leaders.entrySet().stream().filter(e -> e.getValue() != id).mapToInt(Map.Entry::getKey)
                    .findFirst().orElseThrow();
        }
        try (Admin viaCoordinator = Admin.create(Map.of("bootstrap.servers", coordinator.bootstrapServers()))) {
            // (every partition, those the other node serves too, before the stray fetch)
            assertThat(own).as("partitions the coordinator serves").isNotEmpty().hasSizeLessThan(PARTITIONS);
            assertThat(startOffsets(viaCoordinator)).as("before the stray fetch")
                    .isEqualTo(allAt(every, PER_PARTITION));

            // When a ShareFetch for a partition the other node leads reaches the coordinator
            try (RawKafkaClient raw = RawKafkaClient.connect(coordinator.bootstrapServers())) {
                assertThat(shareFetchError(raw, topicId, stray)).as("ShareFetch of partition %d on the node"
                        + " that does not lead it", stray).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
            }

            // Then its offsets answer is the same: every partition, all accepted
            assertThat(startOffsets(viaCoordinator)).as("after a stray ShareFetch of partition %d (led by the"
                    + " other node); null = start offset -1", stray).isEqualTo(allAt(every, PER_PARTITION));
        }
    }

    private static Map<Integer, Integer> leaders(Admin admin) throws Exception {
        return leaders(admin, TOPIC);
    }

    private static Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
        Map<Integer, Integer> out = new TreeMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    /** One share consumer accepts every record, each acceptance confirmed. */
    private static void acceptAll(ShareClients clients) {
        Set<String> confirmed = new HashSet<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(GROUP, "explicit")) {
            consumer.subscribe(Set.of(TOPIC));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int polls = 0; confirmed.size() < PARTITIONS * PER_PARTITION && polls < 1_000
                    && System.nanoTime() < deadline; polls++) {
                Map<TopicPartition, List<String>> got = new TreeMap<>(
                        java.util.Comparator.comparingInt(TopicPartition::partition));
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    got.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>())
                            .add(r.value());
                }
                if (!got.isEmpty()) {
                    consumer.commitSync(Duration.ofSeconds(10)).forEach((tip, failure) -> {
                        if (failure.isEmpty()) {
                            confirmed.addAll(got.getOrDefault(tip.topicPartition(), List.of()));
                        }
                    });
                }
            }
        }
        assertThat(confirmed).as("records accepted, confirmed").hasSize(PARTITIONS * PER_PARTITION);
    }

    /** The group's start offsets as Admin lists them; null where the answer said -1. */
    private static Map<Integer, Long> startOffsets(Admin admin) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                Map.of(GROUP, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(GROUP).get(10, TimeUnit.SECONDS);
        Map<Integer, Long> out = new TreeMap<>();
        offsets.forEach((tp, info) -> out.put(tp.partition(), info == null ? null : info.startOffset()));
        return out;
    }

    private static Map<Integer, Long> allAt(Set<TopicPartition> partitions, long offset) {
        Map<Integer, Long> out = new TreeMap<>();
        partitions.forEach(tp -> out.put(tp.partition(), offset));
        return out;
    }

    /** A new share session's first ShareFetch of one partition; the partition's error. */
    private static Errors shareFetchError(RawKafkaClient raw, Uuid topicId, int partition) throws Exception {
        short version = ApiKeys.SHARE_FETCH.latestVersion();
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(GROUP)
                .setMemberId(Uuid.randomUuid().toString()).setShareSessionEpoch(0).setMaxWaitMs(100)
                .setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(10).setBatchSize(10);
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        topic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(partition));
        data.topics().add(topic);
        RequestHeader header = new RequestHeader(ApiKeys.SHARE_FETCH, version, "stray", 1);
        raw.send(header, new ShareFetchRequest.Builder(data).build(version));
        ShareFetchResponseData answer = ((ShareFetchResponse) raw.receiveResponse(header)).data();
        assertThat(Errors.forCode(answer.errorCode())).as("top-level error").isEqualTo(Errors.NONE);
        List<ShareFetchResponseData.PartitionData> partitions = new ArrayList<>();
        answer.responses().forEach(t -> partitions.addAll(t.partitions()));
        assertThat(partitions).hasSize(1);
        return Errors.forCode(partitions.get(0).errorCode());
    }
}
