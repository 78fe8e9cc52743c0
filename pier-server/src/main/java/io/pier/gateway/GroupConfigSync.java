package io.pier.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.pier.service.ShareGroups;

/**
 * Share-group settings ({@code share.auto.offset.reset}, the lock duration, the delivery limit...)
 * shared by every gateway node of an upstream: a node that changes a group's settings writes the
 * group's whole settings to a compacted topic on the upstream ({@code pier.gateway.config.topic},
 * one partition, key = group id), and every node, itself included, reads that topic from its
 * start and applies each record to its own engine. The node that leads a partition (and starts
 * its share-partitions) is often not the one the settings were sent to, so before it picks a new
 * share-partition's start it catches up with the topic ({@link #caughtUp}): a client that set
 * {@code share.auto.offset.reset} and then consumes sees its setting everywhere.
 */
public final class GroupConfigSync implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupConfigSync.class);
    static final String TOPIC = "pier.gateway.config.topic";
    static final String DEFAULT_TOPIC = "__pier_group_configs";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String NODE_HEADER = "pier.node";
    private static final String CHANGE_HEADER = "pier.change";

    private record Waiter(long offset, CompletableFuture<Void> done) {}

    private final TopicPartition partition;
    private final ShareGroups groups;
    private final String self;
    /** Per group: the number of this node's last change, to tell its own stale records from new ones. */
    private final Map<String, Long> changes = new java.util.concurrent.ConcurrentHashMap<>();
    private final KafkaProducer<String, String> producer;
    private final KafkaConsumer<String, String> consumer;
    private final Admin admin;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    /** The offset after the last record applied; written by the sync thread only. */
    private volatile long applied;
    private volatile boolean running = true;

    private GroupConfigSync(String topic, Map<String, Object> upstream, ShareGroups groups, int nodeId) {
        this.partition = new TopicPartition(topic, 0);
        this.groups = groups;
        this.self = String.valueOf(nodeId);
        Map<String, Object> p = new HashMap<>(upstream);
        p.put("acks", "all");
        p.put("enable.idempotence", true);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        Map<String, Object> c = new HashMap<>(upstream);
        c.put("enable.auto.commit", false);
        c.put("isolation.level", "read_committed");
        this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
        this.admin = Admin.create(upstream);
        this.thread = new Thread(this::run, "pier-gateway-configs");
        thread.setDaemon(true);
    }

    /** Creates the topic if needed and starts applying it from its beginning. */
    public static GroupConfigSync start(Map<String, String> config, Map<String, Object> upstream, ShareGroups groups,
            int nodeId) throws Exception {
        String topic = config.getOrDefault(TOPIC, DEFAULT_TOPIC);
        try (Admin admin = Admin.create(upstream)) {
            int brokers = admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).size();
            short replicas = (short) Math.max(1, Math.min(3, brokers));
            admin.createTopics(List.of(new NewTopic(topic, 1, replicas).configs(Map.of(
                    TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                    TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, String.valueOf(Math.min(2, replicas))))))
                    .all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
        GroupConfigSync sync = new GroupConfigSync(topic, upstream, groups, nodeId);
        sync.consumer.assign(List.of(sync.partition));
        sync.consumer.seekToBeginning(List.of(sync.partition));
        sync.thread.start();
        return sync;
    }

    /**
     * Numbers a change of {@code groupId}'s settings about to be applied here, before it is: from
     * now on this node's own records of the group older than it are stale.
     */
    long beginChange(String groupId) {
        return changes.merge(groupId, 1L, Long::sum);
    }

    /**
     * Writes a group's whole settings (empty: none), already applied here as change {@code change}, for every node;
     * completes once the upstream has them. Each record names its node and change number: this
     * node skips its own records older than its last change of the group, which would otherwise
     * undo a later change for a moment (three changes in a row, then a describe, on one node).
     */
    CompletableFuture<Void> publish(String groupId, Map<String, String> overrides, long change) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        String value = overrides.isEmpty() ? null : encode(overrides);
        ProducerRecord<String, String> record = new ProducerRecord<>(partition.topic(), partition.partition(), groupId,
                value);
        record.headers().add(NODE_HEADER, self.getBytes(StandardCharsets.UTF_8))
                .add(CHANGE_HEADER, String.valueOf(change).getBytes(StandardCharsets.UTF_8));
        var unused = producer.send(record, (md, e) -> {
            if (e != null) {
                done.completeExceptionally(e);
            } else {
                done.complete(null);
            }
        });
        return done;
    }

    /** Completes once every setting written to the upstream before this call is applied here. */
    CompletableFuture<Void> caughtUp() {
        return admin.listOffsets(Map.of(partition, org.apache.kafka.clients.admin.OffsetSpec.latest()))
                .partitionResult(partition).toCompletionStage().toCompletableFuture().thenCompose(info -> {
            long end = info.offset();
            if (applied >= end) {
                return CompletableFuture.completedFuture(null);
            }
            Waiter w = new Waiter(end, new CompletableFuture<>());
            waiters.add(w);
            if (applied >= end) {
                w.done().complete(null);
            }
            return w.done().orTimeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    apply(r);
                }
                applied = consumer.position(partition);
                waiters.removeIf(w -> {
                    if (applied >= w.offset()) {
                        w.done().complete(null);
                        return true;
                    }
                    return false;
                });
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            LOG.error("Reading share-group settings from {} failed; this node stops following them", partition, e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private void apply(ConsumerRecord<String, String> r) {
        Header node = r.headers().lastHeader(NODE_HEADER);
        Header change = r.headers().lastHeader(CHANGE_HEADER);
        if (node != null && change != null && self.equals(new String(node.value(), StandardCharsets.UTF_8))
                && Long.parseLong(new String(change.value(), StandardCharsets.UTF_8))
                        < changes.getOrDefault(r.key(), 0L)) {
            return; // this node's own, older than what it has applied since
        }
        Map<String, String> overrides = r.value() == null ? Map.of() : decode(r.value());
        try {
            groups.replaceConfig(r.key(), overrides).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warn("Applying the settings of share group {} from the upstream failed: {}", r.key(), e.toString());
        }
    }

    static String encode(Map<String, String> overrides) {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(overrides).forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString();
    }

    static Map<String, String> decode(String value) {
        Map<String, String> out = new HashMap<>();
        for (String line : value.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return out;
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
        List<Waiter> left = new ArrayList<>(waiters);
        left.forEach(w -> w.done().completeExceptionally(new IllegalStateException("the gateway is stopping")));
    }
}
