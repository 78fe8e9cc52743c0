package io.pier.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
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
    private static final Duration TIMEOUT = CompactedTopic.TIMEOUT;
    private static final String NODE_HEADER = "pier.node";
    private static final String CHANGE_HEADER = "pier.change";

    private final ShareGroups groups;
    private final String self;
    /** Per group: the number of this node's last change, to tell its own stale records from new ones. */
    private final Map<String, Long> changes = new java.util.concurrent.ConcurrentHashMap<>();
    private final CompactedTopic table;

    private GroupConfigSync(String topic, Map<String, Object> upstream, ShareGroups groups, int nodeId)
            throws Exception {
        this.groups = groups;
        this.self = String.valueOf(nodeId);
        this.table = CompactedTopic.start(topic, upstream, "pier-gateway-configs", this::apply);
    }

    /** Creates the topic if needed and starts applying it from its beginning. */
    public static GroupConfigSync start(Map<String, String> config, Map<String, Object> upstream, ShareGroups groups,
            int nodeId) throws Exception {
        return new GroupConfigSync(config.getOrDefault(TOPIC, DEFAULT_TOPIC), upstream, groups, nodeId);
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
        ProducerRecord<String, String> record = table.record(groupId, overrides.isEmpty() ? null : encode(overrides));
        record.headers().add(NODE_HEADER, self.getBytes(StandardCharsets.UTF_8))
                .add(CHANGE_HEADER, String.valueOf(change).getBytes(StandardCharsets.UTF_8));
        return table.send(record).thenApply(offset -> null);
    }

    /** Completes once every setting written to the upstream before this call is applied here. */
    CompletableFuture<Void> caughtUp() {
        return table.caughtUp();
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
        table.close();
    }
}
