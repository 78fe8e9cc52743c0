package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Consumer groups with the real KafkaConsumer, of both protocols: classic (cooperative-sticky, the
 * client assigns) and consumer (KIP-848, the broker's uniform assignor). Partitions spread over the
 * members, move when a member joins (only what moves is revoked), and are handed over when a member
 * closes or stops heartbeating; with commitSync after every poll (and of a revoked partition's
 * progress in onPartitionsRevoked), every record is consumed exactly once across those rebalances.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ConsumerGroupRebalanceIT {
    private static final String TOPIC = "rebalance";
    private static final int PARTITIONS = 6;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0",
            "group.min.session.timeout.ms", "500",
            "group.consumer.min.session.timeout.ms", "1000", "group.consumer.session.timeout.ms", "3000",
            "group.consumer.min.heartbeat.interval.ms", "100", "group.consumer.heartbeat.interval.ms", "200");

    private String protocol;
    private String topic;
    private String group;

    /** Values seen, with how often. */
    private final Map<String, AtomicInteger> consumed = new ConcurrentHashMap<>();

    /** A KafkaConsumer polling on its own thread, committing after every poll. */
    private final class Member implements AutoCloseable {
        final String name;
        final String memberProtocol;
        final Set<TopicPartition> owned = ConcurrentHashMap.newKeySet();
        final List<Set<TopicPartition>> revocations = new CopyOnWriteArrayList<>();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        private volatile boolean running = true;
        private final Thread thread;

        Member(String name) {
            this(name, protocol);
        }

        Member(String name, String memberProtocol) {
            this.name = name + "-" + memberProtocol;
            this.memberProtocol = memberProtocol;
            this.thread = new Thread(this::run, "member-" + name);
            thread.start();
        }

        private void run() {
            Properties p = new Properties();
            p.put("bootstrap.servers", PIER.bootstrapServers());
            p.put("group.id", group);
            p.put("group.protocol", memberProtocol);
            p.put("client.id", name);
            p.put("enable.auto.commit", "false");
            p.put("auto.offset.reset", "earliest");
            if (memberProtocol.equals("classic")) {
                // With the consumer protocol the broker assigns and sets these timings.
                p.put("partition.assignment.strategy", CooperativeStickyAssignor.class.getName());
                p.put("session.timeout.ms", "6000");
                p.put("heartbeat.interval.ms", "200");
            }
            try (KafkaConsumer<String, String> c =
                    new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                Map<TopicPartition, OffsetAndMetadata> processed = new java.util.HashMap<>();
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        // What was processed of a partition is committed before it moves on.
                        Map<TopicPartition, OffsetAndMetadata> mine = new java.util.HashMap<>();
                        for (TopicPartition tp : partitions) {
                            OffsetAndMetadata o = processed.remove(tp);
                            if (o != null) {
                                mine.put(tp, o);
                            }
                        }
                        if (!mine.isEmpty()) {
                            c.commitSync(mine);
                        }
                        if (!partitions.isEmpty()) {
                            revocations.add(Set.copyOf(partitions));
                        }
                        owned.removeAll(partitions);
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        owned.addAll(partitions);
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> partitions) {
                        owned.removeAll(partitions);
                    }
                });
                for (int i = 0; running && i < 100_000; i++) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                        consumed.computeIfAbsent(r.value(), v -> new AtomicInteger()).incrementAndGet();
                        processed.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    if (!processed.isEmpty()) {
                        try {
                            c.commitSync(processed);
                            processed.clear();
                        } catch (RebalanceInProgressException e) {
                            // The client is between two rebalance rounds: commit after the next poll.
                        }
                    }
                }
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(failures).as("failures of %s", name).isEmpty();
        }
    }

    private void produce(int from, int to) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = from; i < to; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, null, "v" + i)));
            }
            for (java.util.concurrent.Future<?> f : sent) {
                f.get();
            }
        }
    }

    private void awaitConsumed(int count) {
        await("consumed " + count).atMost(WAIT).until(() -> consumed.size() >= count);
    }

    private static void awaitSpread(List<Member> members, int... sizes) {
        await("assignment over " + members.size()).atMost(WAIT).untilAsserted(() -> {
            Set<TopicPartition> all = new HashSet<>();
            int total = 0;
            List<Integer> counts = new ArrayList<>();
            for (Member m : members) {
                all.addAll(m.owned);
                total += m.owned.size();
                counts.add(m.owned.size());
            }
            assertThat(total).as("each partition owned once").isEqualTo(PARTITIONS);
            assertThat(all).hasSize(PARTITIONS);
            assertThat(counts).containsExactlyInAnyOrder(java.util.Arrays.stream(sizes).boxed().toArray(Integer[]::new));
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void shouldSpreadMoveAndHandOverPartitionsConsumingEveryRecordExactlyOnce(String groupProtocol) throws Exception {
        protocol = groupProtocol;
        topic = TOPIC + "-" + groupProtocol;
        group = "workers-" + groupProtocol;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        produce(0, 300);
        List<Member> members = new ArrayList<>();
        try {
            // Given three members: two partitions each
            for (int i = 1; i <= 3; i++) {
                members.add(new Member("c" + i));
            }
            awaitSpread(members, 2, 2, 2);
            awaitConsumed(300);

            // When a fourth joins, with records flowing
            Map<Member, Set<TopicPartition>> before = new java.util.HashMap<>();
            members.forEach(m -> before.put(m, Set.copyOf(m.owned)));
            members.forEach(m -> m.revocations.clear());
            Member fourth = new Member("c4");
            members.add(fourth);
            produce(300, 600);
            awaitSpread(members, 2, 2, 1, 1);

            // Then cooperative-sticky revoked only what moved to the new member
            Set<TopicPartition> revoked = new HashSet<>();
            for (Member m : members.subList(0, 3)) {
                m.revocations.forEach(revoked::addAll);
                assertThat(before.get(m)).containsAll(m.owned);
            }
            assertThat(revoked).isEqualTo(fourth.owned);

            // When one member closes, the other three take its partitions
            Member closed = members.remove(0);
            closed.close();
            awaitSpread(members, 2, 2, 2);
            produce(600, 900);
            awaitConsumed(900);

            // When a member that stops heartbeating joins, gets partitions and goes quiet
            try (RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers(), Duration.ofSeconds(30))) {
                List<TopicPartition> held = protocol.equals("classic") ? joinAndGoQuiet(raw) : heartbeatAndGoQuiet(raw);
                assertThat(held).isNotEmpty();
                // Then once its session expires the others own everything again
                awaitSpread(members, 2, 2, 2);
            }
            produce(900, 1200);
            awaitConsumed(1200);

            // And every record was consumed exactly once
            assertThat(consumed).hasSize(1200);
            assertThat(consumed.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        } finally {
            for (Member m : members) {
                m.close();
            }
        }
    }

    /**
     * A rolling upgrade and its undoing (KIP-848 online migration, on by default in Kafka 4.4): a
     * consumer-protocol member joins a classic group with members, which becomes a consumer group
     * whose classic members go on with JoinGroup/SyncGroup/Heartbeat; when it leaves, the group is
     * classic again. Partitions are shared by all throughout and every record is consumed once.
     */
    @org.junit.jupiter.api.Test
    void shouldMigrateAGroupWithMembersBetweenProtocolsConsumingEveryRecordOnce() throws Exception {
        protocol = "classic";
        topic = TOPIC + "-migration";
        group = "workers-migration";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
            produce(0, 300);
            List<Member> members = new ArrayList<>();
            try {
                // Given a classic group of two
                members.add(new Member("c1", "classic"));
                members.add(new Member("c2", "classic"));
                awaitSpread(members, 3, 3);
                awaitConsumed(300);

                // When a consumer-protocol member joins, the group becomes a consumer group of three
                Member upgraded = new Member("n1", "consumer");
                members.add(upgraded);
                produce(300, 600);
                awaitSpread(members, 2, 2, 2);
                awaitConsumed(600);
                assertThat(groupType(admin)).isEqualTo(GroupType.CONSUMER);
                // KIP-1099: which members already speak the consumer protocol
                assertThat(admin.describeConsumerGroups(List.of(group)).all().get().get(group).members())
                        .extracting(m -> m.upgraded().orElse(null)).containsExactlyInAnyOrder(false, false, true);

                // When it leaves again, the classic members have a classic group
                members.remove(upgraded);
                upgraded.close();
                awaitSpread(members, 3, 3);
                assertThat(groupType(admin)).isEqualTo(GroupType.CLASSIC);
                produce(600, 900);
                awaitConsumed(900);

                // And every record was consumed exactly once
                assertThat(consumed).hasSize(900);
                assertThat(consumed.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
            } finally {
                for (Member m : members) {
                    m.close();
                }
            }
        }
    }

    private GroupType groupType(Admin admin) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).all().get().get(group).type();
    }

    /**
     * Joins "workers" by hand (JoinGroup v9, SyncGroup, as many rounds as cooperative rebalancing
     * takes to give it partitions), then never heartbeats again; returns what it got.
     */
    private List<TopicPartition> joinAndGoQuiet(RawKafkaClient raw) throws Exception {
        ByteBuffer subscription = ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of(topic)));
        byte[] metadata = new byte[subscription.remaining()];
        subscription.get(metadata);
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
                new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("cooperative-sticky")
                .setMetadata(metadata));
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId("workers-" + protocol).setMemberId("")
                .setSessionTimeoutMs(1000).setRebalanceTimeoutMs(20_000).setProtocolType("consumer")
                .setProtocols(protocols);
        short v = 9;
        JoinGroupResponseData first = call(raw, ApiKeys.JOIN_GROUP, v, join, ++correlation);
        assertThat(first.errorCode()).isEqualTo(Errors.MEMBER_ID_REQUIRED.code());
        join.setMemberId(first.memberId());
        // As a cooperative client does: join again after the owners gave up what moves to it.
        for (int round = 0; round < 10; round++) {
            JoinGroupResponseData joined = call(raw, ApiKeys.JOIN_GROUP, v, join, ++correlation);
            assertThat(joined.errorCode()).isEqualTo(Errors.NONE.code());
            RequestHeader header = new RequestHeader(ApiKeys.SYNC_GROUP, (short) 5, "quiet", ++correlation);
            raw.sendFrame(RawKafkaClient.serialize(header, new SyncGroupRequestData().setGroupId("workers-" + protocol)
                    .setGenerationId(joined.generationId()).setMemberId(joined.memberId())
                    .setProtocolType("consumer").setProtocolName(joined.protocolName()), (short) 5));
            SyncGroupResponse sync = (SyncGroupResponse) raw.receiveResponse(header);
            if (sync.data().errorCode() == Errors.REBALANCE_IN_PROGRESS.code()) {
                // Another member rejoined between our join and sync (a slow machine makes it likely):
                // join again, as a real client does.
                continue;
            }
            assertThat(sync.data().errorCode()).isEqualTo(Errors.NONE.code());
            List<TopicPartition> got =
                    ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(sync.data().assignment())).partitions();
            if (!got.isEmpty()) {
                return got;
            }
            await("the next rebalance").atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
                RequestHeader hb = new RequestHeader(ApiKeys.HEARTBEAT, (short) 4, "quiet", ++correlation);
                raw.sendFrame(RawKafkaClient.serialize(hb, new HeartbeatRequestData().setGroupId("workers-" + protocol)
                        .setGenerationId(joined.generationId()).setMemberId(joined.memberId()), (short) 4));
                return ((HeartbeatResponse) raw.receiveResponse(hb)).data().errorCode()
                        == Errors.REBALANCE_IN_PROGRESS.code();
            });
        }
        return List.of();
    }

    /**
     * Joins "workers-consumer" by hand with ConsumerGroupHeartbeat v1 and heartbeats (acknowledging
     * what it is given, as a client does once it has it) until it owns partitions, then goes quiet;
     * returns what it owns.
     */
    private List<TopicPartition> heartbeatAndGoQuiet(RawKafkaClient raw) throws Exception {
        String memberId = org.apache.kafka.common.Uuid.randomUuid().toString();
        ConsumerGroupHeartbeatRequestData hb = new ConsumerGroupHeartbeatRequestData().setGroupId("workers-consumer")
                .setMemberId(memberId).setMemberEpoch(0).setRebalanceTimeoutMs(20_000)
                .setSubscribedTopicNames(List.of(topic)).setTopicPartitions(List.of());
        List<ConsumerGroupHeartbeatRequestData.TopicPartitions> owned = List.of();
        List<TopicPartition> got = new ArrayList<>();
        Map<org.apache.kafka.common.Uuid, String> names;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            org.apache.kafka.common.Uuid id = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
            names = Map.of(id, topic);
        }
        long deadline = System.currentTimeMillis() + WAIT.toMillis();
        while (got.isEmpty() && System.currentTimeMillis() < deadline) {
            RequestHeader header = new RequestHeader(ApiKeys.CONSUMER_GROUP_HEARTBEAT, (short) 1, "quiet", ++correlation);
            raw.sendFrame(RawKafkaClient.serialize(header, hb, (short) 1));
            ConsumerGroupHeartbeatResponseData r =
                    ((ConsumerGroupHeartbeatResponse) raw.receiveResponse(header)).data();
            assertThat(r.errorCode()).as(r.errorMessage()).isEqualTo(Errors.NONE.code());
            if (r.assignment() != null) {
                List<ConsumerGroupHeartbeatRequestData.TopicPartitions> next = new ArrayList<>();
                got.clear();
                for (ConsumerGroupHeartbeatResponseData.TopicPartitions t : r.assignment().topicPartitions()) {
                    next.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(t.topicId())
                            .setPartitions(t.partitions()));
                    t.partitions().forEach(p -> got.add(new TopicPartition(names.get(t.topicId()), p)));
                }
                owned = next;
            }
            hb = new ConsumerGroupHeartbeatRequestData().setGroupId("workers-consumer").setMemberId(memberId)
                    .setMemberEpoch(r.memberEpoch()).setTopicPartitions(owned);
            if (got.isEmpty()) {
                Thread.sleep(100);
            }
        }
        // The last heartbeat acknowledges what it holds, so the group sees it owning them.
        RequestHeader header = new RequestHeader(ApiKeys.CONSUMER_GROUP_HEARTBEAT, (short) 1, "quiet", ++correlation);
        raw.sendFrame(RawKafkaClient.serialize(header, hb, (short) 1));
        raw.receiveResponse(header);
        return got;
    }

    private static int correlation;

    private static JoinGroupResponseData call(RawKafkaClient raw, ApiKeys key, short version,
            JoinGroupRequestData body, int correlationId) throws Exception {
        RequestHeader header = new RequestHeader(key, version, "quiet", correlationId);
        raw.sendFrame(RawKafkaClient.serialize(header, body, version));
        return ((JoinGroupResponse) raw.receiveResponse(header)).data();
    }
}
