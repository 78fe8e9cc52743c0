package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.pier.it.share.ShareClients;
import io.pier.testkit.UpstreamKafka;
import io.pier.server.Pier;

/**
 * Issue 16's "restart all gateway nodes: state recovered from the upstream, nothing lost". A
 * gateway keeps its share state (and which share groups exist) in a topic of the upstream, so
 * when every gateway node is gone, a new node started on a fresh, empty data folder must serve
 * the share groups exactly where the old one left them: what was accepted never comes back, what
 * was not (the records a consumer held when the gateway stopped included) does, and the group's
 * start offsets are the same. The old node's data folder is deleted before the new one starts,
 * so nothing can come from local files. Clients come to the new node as soon as it serves them,
 * as they do after a restart; the group's configs must have survived too, and a consumer that
 * fetches while the new node is still taking its state over must lose nothing.
 *
 * <p>Delivery counts: Pier persists every acquisition before the consumer gets the records
 * ({@code pier.share.delivery.count.durable}, on by default), as AVAILABLE with the new count, so
 * a record held (acquired, never acknowledged) when the gateway stopped comes back with count 2,
 * and a record never acquired with count 1. The first consumer acquires only what its polls hand
 * it ({@code share.acquire.mode=record_limit}: MaxRecords is a budget for the whole ShareFetch,
 * and the client fetches again only when the application polls), so "held" is exactly the
 * records its last poll returned. Kafka itself does not persist the acquired state (KIP-932), so
 * there a held record's count after a broker restart may be lower; Pier's rule is stricter.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayRestartIT {
    private static final Duration POLL = Duration.ofMillis(200);

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    @TempDir
    Path folders;

    private static Pier gateway(Path dataDir) throws Exception {
        return Pier.builder().dataDir(dataDir)
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers()).start();
    }

    /** What the group did on gateway A before A stopped. */
    private record BeforeRestart(Set<String> accepted, Set<String> held,
            Map<TopicPartition, SharePartitionOffsetInfo> offsets) {}

    /**
     * On a gateway started on {@code dir}: creates {@code topic}, produces {@code perPartition}
     * records "p{partition}-{i}" to each partition, and has {@code group} read from the earliest.
     * A consumer accepts whole polls (at most {@code maxPoll} records each) while the total stays
     * within {@code acceptUpTo}, then holds the next poll unacknowledged; the gateway is closed
     * while it holds them, then the consumer, and the gateway's data folder is deleted.
     */
    private static BeforeRestart acceptThenHoldAndStop(Path dir, String topic, int partitions, int perPartition,
            String group, int maxPoll, int acceptUpTo) throws Exception {
        Set<String> accepted = new HashSet<>();
        Map<Integer, Long> acceptedPerPartition = new HashMap<>();
        Set<String> held = new HashSet<>();
        Map<TopicPartition, SharePartitionOffsetInfo> offsets;
        KafkaShareConsumer<String, String> consumer = null;
        Pier a = gateway(dir);
        try {
            ShareClients viaA = new ShareClients(a.bootstrapServers());
            viaA.createTopic(topic, partitions);
            viaA.setGroupConfig(group, "share.auto.offset.reset", "earliest");
            for (int p = 0; p < partitions; p++) {
                viaA.produce(topic, p, "p" + p, perPartition);
            }
            consumer = viaA.consumer(group, "explicit", "share.acquire.mode", "record_limit", "max.poll.records",
                    Integer.toString(maxPoll));
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            for (int polls = 0; held.isEmpty() && polls < 1_000 && System.nanoTime() < deadline; polls++) {
                ConsumerRecords<String, String> records = consumer.poll(POLL);
                for (ConsumerRecord<String, String> r : records) {
                    assertThat(r.deliveryCount()).as(r.value()).hasValue((short) 1);
                }
                if (accepted.size() + records.count() > acceptUpTo) {
                    // not acknowledged, and no poll after this one: acquired until the gateway stops
                    records.forEach(r -> held.add(r.value()));
                } else if (!records.isEmpty()) {
                    for (ConsumerRecord<String, String> r : records) {
                        accepted.add(r.value());
                        acceptedPerPartition.merge(r.partition(), 1L, Long::sum);
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    consumer.commitSync(Duration.ofSeconds(10)); // durable on the upstream before it returns
                }
            }
            assertThat(held).as("a poll held unacknowledged").isNotEmpty();
            assertThat(accepted.size()).isBetween(acceptUpTo - maxPoll + 1, acceptUpTo);

            // Each partition's accepted records are its first ones (acquisition goes in offset order
            // and every poll before the held one was accepted): that is the start offset, and the
            // held records, not acknowledged, are still in the lag.
            offsets = shareGroupOffsets(a, group);
            assertThat(offsets).hasSize(partitions);
            for (int p = 0; p < partitions; p++) {
                SharePartitionOffsetInfo info = offsets.get(new TopicPartition(topic, p));
                long start = acceptedPerPartition.getOrDefault(p, 0L);
                assertThat(info.startOffset()).as("start offset of partition " + p + " on A").isEqualTo(start);
                assertThat(info.lag()).as("lag of partition " + p + " on A").hasValue(perPartition - start);
            }
            // For the test's log: what B is to take over.
            System.out.println("On A before it stopped: " + offsets + "; " + accepted.size() + " accepted, "
                    + held.size() + " held");
        } finally {
            // Every gateway node goes away while the consumer still holds its last poll.
            a.close();
        }
        closeQuietly(consumer);
        deleteTree(dir);
        assertThat(dir).doesNotExist();
        return new BeforeRestart(accepted, held, offsets);
    }

    /**
     * Clients do not wait for a restarted gateway to settle: Admin and the consumer come to B as
     * soon as it serves clients. A node still taking its state over may answer with a retriable
     * error (Kafka: COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE, which Admin and the
     * consumer retry), never as if the group or its state did not exist. The checks on B are soft,
     * so that one run reports every difference.
     */
    @Test
    void shouldRecoverShareGroupsFromTheUpstreamWhenEveryGatewayNodeRestartsOnAFreshDataFolder() throws Exception {
        String topic = "restart-jobs";
        String group = "restart-workers";
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        Path dirB = folders.resolve("gateway-b");

        // Given gateway A, 2 x 200 records, and a group that accepted about the first half of what it
        // got and held the next poll (up to 50) when A, the only gateway node, stopped
        BeforeRestart before = acceptThenHoldAndStop(folders.resolve("gateway-a"), topic, 2, 200, group, 50, 200);

        // When gateway B starts on a fresh data folder, and Admin and a new consumer come at once
        assertThat(dirB).doesNotExist();
        SoftAssertions soft = new SoftAssertions();
        Pier b = gateway(dirB);
        try {
            // Then B knows the group (empty now: its consumer went with A)...
            String state;
            try (Admin admin = new ShareClients(b.bootstrapServers()).admin()) {
                state = admin.describeShareGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group)
                        .groupState().toString();
            } catch (ExecutionException e) {
                state = "not described: " + e.getCause();
            }
            soft.assertThat(state).as("state of the group on B").isEqualTo("Empty");
            // ...and reports A's start offsets and lags
            Map<TopicPartition, SharePartitionOffsetInfo> onB = shareGroupOffsets(b, group);
            soft.assertThat(onB.keySet()).as("partitions with offsets on B").containsExactlyInAnyOrderElementsOf(tps);
            for (TopicPartition tp : tps) {
                if (onB.containsKey(tp)) {
                    soft.assertThat(onB.get(tp).startOffset()).as("start offset of " + tp + " on B")
                            .isEqualTo(before.offsets().get(tp).startOffset());
                    soft.assertThat(onB.get(tp).lag()).as("lag of " + tp + " on B")
                            .isEqualTo(before.offsets().get(tp).lag());
                }
            }

            // And the new consumer gets exactly what was not accepted, each record once, the held
            // ones on their second delivery, the others on their first
            Map<String, Integer> got = new HashMap<>();
            Map<String, Short> counts = new HashMap<>();
            consumeAll(b, topic, group, notAccepted(before, 2, 200).size(), got, counts, Duration.ofSeconds(30),
                    Duration.ofSeconds(2));
            soft.assertThat(got.keySet()).as("records delivered on B")
                    .containsExactlyInAnyOrderElementsOf(notAccepted(before, 2, 200));
            got.forEach((value, times) -> soft.assertThat(times).as("deliveries of " + value).isEqualTo(1));
            counts.forEach((value, count) -> soft.assertThat(count).as("delivery count of " + value)
                    .isEqualTo(before.held().contains(value) ? (short) 2 : (short) 1));

            // And the group's start offsets are now the end of both partitions
            Map<TopicPartition, SharePartitionOffsetInfo> after = shareGroupOffsets(b, group);
            for (TopicPartition tp : tps) {
                soft.assertThat(after.get(tp)).as("offsets of " + tp + " at the end").isNotNull();
                if (after.containsKey(tp)) {
                    soft.assertThat(after.get(tp).startOffset()).as("start offset of " + tp + " at the end")
                            .isEqualTo(200L);
                    soft.assertThat(after.get(tp).lag()).as("lag of " + tp + " at the end").hasValue(0L);
                }
            }
        } finally {
            b.close();
        }
        soft.assertAll();
    }

    /**
     * Group configs are set through a gateway (IncrementalAlterConfigs on a GROUP resource); Kafka
     * keeps them in its cluster metadata, so they outlive every broker. A group whose
     * share-partition has no state yet depends on them: with {@code share.auto.offset.reset=earliest}
     * it must get the records already on the topic when it first reads it, after any restart.
     */
    @Test
    void shouldKeepAGroupsConfigsWhenEveryGatewayNodeRestartsOnAFreshDataFolder() throws Exception {
        String topic = "restart-configs";
        String group = "restart-configured";
        TopicPartition tp = new TopicPartition(topic, 0);

        // Given a group set to read from the earliest through gateway A, and 10 records waiting for it
        Pier a = gateway(folders.resolve("gateway-a"));
        try {
            ShareClients viaA = new ShareClients(a.bootstrapServers());
            viaA.createTopic(topic, 1);
            viaA.setGroupConfig(group, "share.auto.offset.reset", "earliest");
            viaA.produce(topic, 0, "waiting", 10);
        } finally {
            a.close();
        }

        // When every gateway node is replaced by B on a fresh folder, and the group first reads there
        Pier b = gateway(folders.resolve("gateway-b"));
        try {
            ShareClients viaB = new ShareClients(b.bootstrapServers());
            Map<String, Integer> got = new HashMap<>();
            Map<String, Short> counts = new HashMap<>();
            try (KafkaShareConsumer<String, String> consumer = viaB.consumer(group, "explicit")) {
                consumer.subscribe(Set.of(topic));
                // Once its share-partition exists, a marker is produced: when the marker has come,
                // whatever was to come before it has come too (offset order), so the wait ends.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                boolean produced = false;
                for (int rounds = 0; !got.containsKey("marker-0") && rounds < 100 && System.nanoTime() < deadline;
                        rounds++) {
                    consume(consumer, got, counts, () -> false, Duration.ofMillis(400));
                    if (!produced && shareGroupOffsetsOrEmpty(b, group).containsKey(tp)) {
                        viaB.produce(topic, 0, "marker", 1);
                        produced = true;
                    }
                }
            }
            Config configs;
            try (Admin admin = viaB.admin()) {
                ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
                configs = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            }

            // Then it reads from the earliest, as configured: the 10 waiting records, then the marker
            SoftAssertions soft = new SoftAssertions();
            soft.assertThat(got.keySet()).as("records the group got on B").containsExactlyInAnyOrder("waiting-0",
                    "waiting-1", "waiting-2", "waiting-3", "waiting-4", "waiting-5", "waiting-6", "waiting-7",
                    "waiting-8", "waiting-9", "marker-0");
            ConfigEntry reset = configs.get("share.auto.offset.reset");
            soft.assertThat(reset).as("share.auto.offset.reset on B").isNotNull();
            if (reset != null) {
                soft.assertThat(reset.value()).as("share.auto.offset.reset on B").isEqualTo("earliest");
                soft.assertThat(reset.source()).as("its source on B")
                        .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            }
            soft.assertAll();
        } finally {
            b.close();
        }
    }

    /**
     * A restarted gateway serves clients before it has taken every state partition over (it takes
     * them one after another, each replayed from the upstream). A consumer that comes at once may
     * fetch partitions whose state the new node has not taken over yet. It must then be told to
     * wait or ask again (Kafka: a retriable error), never be served from a state built afresh: the
     * group accepted the first records of each partition before, and those must not come back.
     *
     * <p>The window is widened: a state topic of its own with 8 partitions (taken in turn, 130 to
     * 650 ms each here), a group whose own state partition is the first taken (so the consumer
     * joins early), and, among candidate topics, the one whose partitions map to the state
     * partitions taken last. The placement is the gateway's ({@code PartitionedShareState}: a group
     * by {@code String.hashCode}, a topic-partition by {@code 31 * topicId.hashCode() + partition},
     * modulo the partition count); if it changes, this test still checks the outcome, only perhaps
     * outside the window.
     */
    @Test
    void shouldServeTheRecoveredStateToAConsumerThatFetchesWhileTheNewGatewayTakesItOver() throws Exception {
        int statePartitions = 8;
        int partitions = 4;
        String stateTopic = "__pier_share_state_take_over";
        String topic = topicOnTheLastStatePartitions("take-over", 16, partitions, statePartitions);
        String group = null;
        for (int i = 0; i < 10_000 && group == null; i++) {
            if (Math.floorMod(("take-over-" + i).hashCode(), statePartitions) == 0) {
                group = "take-over-" + i;
            }
        }
        assertThat(group).isNotNull();

        // Given a group that accepted the first 5 records of each partition on gateway A
        produceDirectly(topic, partitions, 0, 5);
        Set<String> firstFive = new HashSet<>();
        for (int p = 0; p < partitions; p++) {
            for (int i = 0; i < 5; i++) {
                firstFive.add("p" + p + "-" + i);
            }
        }
        Pier a = gatewayWithStateTopic(folders.resolve("gateway-a"), stateTopic, statePartitions);
        try {
            new ShareClients(a.bootstrapServers()).setGroupConfig(group, "share.auto.offset.reset", "earliest");
            Map<String, Integer> gotOnA = new HashMap<>();
            // A takes its state partitions over in turn too, these last: 1 to 4 s here
            consumeAll(a, topic, group, firstFive.size(), gotOnA, new HashMap<>(), Duration.ofSeconds(25),
                    Duration.ZERO);
            assertThat(gotOnA.keySet()).as("accepted on A").containsExactlyInAnyOrderElementsOf(firstFive);
        } finally {
            a.close();
        }
        // and 5 more records on each partition, produced while no gateway runs
        produceDirectly(topic, partitions, 5, 5);
        Set<String> expected = new HashSet<>();
        for (int p = 0; p < partitions; p++) {
            for (int i = 5; i < 10; i++) {
                expected.add("p" + p + "-" + i);
            }
        }

        // When gateway B starts and a consumer of the group comes at once
        Map<String, Integer> got = new HashMap<>();
        Map<String, Short> counts = new HashMap<>();
        Pier b = gatewayWithStateTopic(folders.resolve("gateway-b"), stateTopic, statePartitions);
        try {
            // Its take-over ends in 2 to 5 s here; the 20 records come within seconds after.
            consumeAll(b, topic, group, expected.size(), got, counts, Duration.ofSeconds(25), Duration.ofSeconds(2));
        } finally {
            b.close();
        }

        // Then it got exactly the 5 new records of each partition, each once, on its first delivery
        assertThat(got.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(got).allSatisfy((value, times) -> assertThat(times).as(value).isEqualTo(1));
        assertThat(counts).allSatisfy((value, count) -> assertThat(count).as(value).isEqualTo((short) 1));
    }

    /**
     * Admin's views of the share groups as a whole (ListGroups, a group's offsets for every
     * partition) asked of a node still taking its state over must be retried, never answered from
     * part of the state: as in the take-over test above, the group's own state partition is taken
     * first and the topic's last, so the group is known well before its share-partitions are.
     */
    @Test
    void shouldListAGroupAndAllItsOffsetsToAdminWhileTheNewGatewayTakesItsStateOver() throws Exception {
        int statePartitions = 8;
        String stateTopic = "__pier_share_state_listing";
        String topic = topicOnTheLastStatePartitions("listing", 16, 1, statePartitions);
        String group = null;
        for (int i = 0; i < 10_000 && group == null; i++) {
            if (Math.floorMod(("listing-" + i).hashCode(), statePartitions) == 0) {
                group = "listing-" + i;
            }
        }
        assertThat(group).isNotNull();
        TopicPartition tp = new TopicPartition(topic, 0);
        produceDirectly(topic, 1, 0, 10);

        // Given a group that exists only because its offsets were altered through gateway A
        Pier a = gatewayWithStateTopic(folders.resolve("gateway-a"), stateTopic, statePartitions);
        try (Admin admin = new ShareClients(a.bootstrapServers()).admin()) {
            admin.alterShareGroupOffsets(group, Map.of(tp, 7L)).all().get(30, TimeUnit.SECONDS);
        } finally {
            a.close();
        }

        // When gateway B starts and Admin asks at once
        Pier b = gatewayWithStateTopic(folders.resolve("gateway-b"), stateTopic, statePartitions);
        try (Admin admin = new ShareClients(b.bootstrapServers()).admin()) {
            // Then B lists the group and its start offset
            assertThat(admin.listGroups(ListGroupsOptions.forShareGroups()).all().get(30, TimeUnit.SECONDS))
                    .extracting(GroupListing::groupId).contains(group);
            SharePartitionOffsetInfo info = admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get(30, TimeUnit.SECONDS).get(tp);
            assertThat(info).as("offsets of " + tp).isNotNull();
            assertThat(info.startOffset()).isEqualTo(7L);
        } finally {
            b.close();
        }
    }

    /** Produces "p{partition}-{i}" for i in [from, from + count) to every partition, on the upstream itself. */
    private static void produceDirectly(String topic, int partitions, int from, int count) throws Exception {
        Map<String, Object> producerConfig = UPSTREAM.clientConfig();
        producerConfig.put("acks", "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig, new StringSerializer(),
                new StringSerializer())) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                for (int i = from; i < from + count; i++) {
                    acks.add(producer.send(new ProducerRecord<>(topic, p, null, "p" + p + "-" + i)));
                }
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static Pier gatewayWithStateTopic(Path dataDir, String stateTopic, int statePartitions) throws Exception {
        return Pier.builder().dataDir(dataDir)
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                .config("pier.gateway.state.topic", stateTopic)
                .config("pier.gateway.state.partitions", Integer.toString(statePartitions)).start();
    }

    /**
     * Creates {@code candidates} topics of {@code partitions} partitions on the upstream and keeps
     * the one whose lowest state partition (by the gateway's placement) is highest, deleting the
     * others: its share-partitions are the last a gateway node takes over.
     */
    private static String topicOnTheLastStatePartitions(String prefix, int candidates, int partitions,
            int statePartitions) throws Exception {
        try (Admin direct = Admin.create(UPSTREAM.clientConfig())) {
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < candidates; i++) {
                topics.add(new NewTopic(prefix + "-" + i, partitions, (short) 1));
            }
            direct.createTopics(topics).all().get(30, TimeUnit.SECONDS);
            String best = null;
            int bestLowest = -1;
            for (var e : direct.describeTopics(topics.stream().map(NewTopic::name).toList()).allTopicNames()
                    .get(30, TimeUnit.SECONDS).entrySet()) {
                int lowest = Integer.MAX_VALUE;
                for (int p = 0; p < partitions; p++) {
                    int state = Math.floorMod(31 * e.getValue().topicId().hashCode() + p, statePartitions);
                    lowest = Math.min(lowest, state);
                }
                if (lowest > bestLowest) {
                    best = e.getKey();
                    bestLowest = lowest;
                }
            }
            String kept = best;
            direct.deleteTopics(topics.stream().map(NewTopic::name).filter(n -> !n.equals(kept)).toList()).all()
                    .get(30, TimeUnit.SECONDS);
            System.out.println("Topic " + kept + ": state partitions " + bestLowest + " and up");
            return kept;
        }
    }

    /** Every "p{partition}-{i}" value produced by {@link #acceptThenHoldAndStop} that was not accepted. */
    private static Set<String> notAccepted(BeforeRestart before, int partitions, int perPartition) {
        Set<String> out = new HashSet<>();
        for (int p = 0; p < partitions; p++) {
            for (int i = 0; i < perPartition; i++) {
                out.add("p" + p + "-" + i);
            }
        }
        out.removeAll(before.accepted());
        return out;
    }

    /**
     * A new consumer of {@code group} on {@code gateway} accepts what it gets until {@code expected}
     * distinct values came (at most {@code max}), then {@code more}: nothing beyond them may come
     * (an accepted record, a second copy).
     */
    private static void consumeAll(Pier gateway, String topic, String group, int expected, Map<String, Integer> got,
            Map<String, Short> counts, Duration max, Duration more) {
        try (KafkaShareConsumer<String, String> consumer = new ShareClients(gateway.bootstrapServers())
                .consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            consume(consumer, got, counts, () -> got.size() >= expected, max);
            consume(consumer, got, counts, () -> false, more);
        }
    }

    /**
     * Polls until {@code done} holds or {@code max} passes, accepting every record and counting how
     * often each value came and its last delivery count. Bounded in polls and time.
     */
    private static void consume(KafkaShareConsumer<String, String> consumer, Map<String, Integer> got,
            Map<String, Short> counts, BooleanSupplier done, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        for (int polls = 0; !done.getAsBoolean() && polls < 1_000 && System.nanoTime() < deadline; polls++) {
            ConsumerRecords<String, String> records = consumer.poll(POLL);
            for (ConsumerRecord<String, String> r : records) {
                got.merge(r.value(), 1, Integer::sum);
                counts.put(r.value(), r.deliveryCount().orElseThrow());
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            if (!records.isEmpty()) {
                consumer.commitSync(Duration.ofSeconds(10));
            }
        }
    }

    /** The group's offsets as Admin reports them through {@code gateway}. */
    private static Map<TopicPartition, SharePartitionOffsetInfo> shareGroupOffsets(Pier gateway, String group)
            throws Exception {
        try (Admin admin = new ShareClients(gateway.bootstrapServers()).admin()) {
            return admin.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get(30, TimeUnit.SECONDS);
        }
    }

    /** As {@link #shareGroupOffsets}, but empty while the gateway does not know the group. */
    private static Map<TopicPartition, SharePartitionOffsetInfo> shareGroupOffsetsOrEmpty(Pier gateway, String group)
            throws Exception {
        try {
            return shareGroupOffsets(gateway, group);
        } catch (ExecutionException e) {
            return Map.of();
        }
    }

    private static void closeQuietly(KafkaShareConsumer<String, String> consumer) {
        if (consumer == null) {
            return;
        }
        try {
            consumer.close(Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            // its gateway is gone: it can release nothing, which is what the test wants
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(f);
            }
        }
    }
}
