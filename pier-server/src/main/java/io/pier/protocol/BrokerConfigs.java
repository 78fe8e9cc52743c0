package io.pier.protocol;

import io.pier.group.ShareGroupBrokerConfig;
import io.pier.service.TopicService;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/**
 * Broker configs: the static settings the broker started with, plus dynamic overrides of the
 * topic defaults, which are stored durably and apply to every topic at once.
 */
public final class BrokerConfigs implements ConfigResourceType {
    /** Defaults shown when a setting was not given; Kafka's names and values. */
    private static final Map<String, String> DEFAULTS = defaults();
    private static final Set<String> DYNAMIC = Set.of("log.segment.bytes", "log.roll.ms", "log.retention.ms",
            "log.retention.bytes", "message.max.bytes", "log.index.interval.bytes", "log.message.timestamp.type",
            "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms");

    private final TopicService topics;
    private final String nodeId;
    private final Map<String, String> staticConfigs;

    public BrokerConfigs(TopicService topics, int nodeId, Map<String, String> staticConfigs) {
        this.topics = topics;
        this.nodeId = String.valueOf(nodeId);
        this.staticConfigs = staticConfigs;
    }

    private static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("listeners", "PLAINTEXT://127.0.0.1:9092");
        d.put("log.dirs", "data");
        d.put("node.id", "1");
        d.put("num.partitions", "1");
        d.put("auto.create.topics.enable", "true");
        d.put("socket.request.max.bytes", "104857600");
        d.put("connections.max.idle.ms", "600000");
        d.put("queued.max.request.bytes", "-1");
        d.put("max.connections", "2147483647");
        d.put("max.connections.per.ip", "2147483647");
        d.put("max.connections.per.ip.overrides", "");
        d.put("log.segment.bytes", "1073741824");
        d.put("log.roll.ms", "604800000");
        d.put("log.retention.ms", "604800000");
        d.put("log.retention.bytes", "-1");
        d.put("message.max.bytes", "1048588");
        d.put("log.index.interval.bytes", "4096");
        d.put("log.message.timestamp.type", "CreateTime");
        d.put("log.message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE));
        d.put("log.message.timestamp.after.max.ms", "3600000");
        d.put("log.cleanup.policy", "delete");
        d.put("pier.log.durability", "durable");
        // Share-group dead-letter queues (KIP-1191); static in Pier, dynamic in Kafka.
        d.put(ShareGroupBrokerConfig.DEAD_LETTER_TOPIC_NAME_PREFIX, "dlq.");
        d.put(ShareGroupBrokerConfig.DEAD_LETTER_AUTO_CREATE_TOPICS_ENABLE, "false");
        return d;
    }

    private void requireThisBroker(String resourceName) {
        if (!resourceName.isEmpty() && !resourceName.equals(nodeId)) {
            throw new InvalidRequestException("Unexpected broker id, expected " + nodeId + " or empty string, but received "
                    + resourceName);
        }
    }

    @Override
    public Map<String, ConfigValue> describe(String resourceName) {
        requireThisBroker(resourceName);
        Map<String, ConfigValue> out = new LinkedHashMap<>();
        Map<String, String> dynamic = topics.dynamicBrokerConfigs();
        DEFAULTS.forEach((k, v) -> out.put(k, new ConfigValue(v, ConfigSource.DEFAULT_CONFIG, !DYNAMIC.contains(k))));
        staticConfigs.forEach((k, v) -> out.put(k,
                new ConfigValue(v, ConfigSource.STATIC_BROKER_CONFIG, !DYNAMIC.contains(k))));
        dynamic.forEach((k, v) -> out.put(k, new ConfigValue(v, ConfigSource.DYNAMIC_BROKER_CONFIG, false)));
        return out;
    }

    @Override
    public CompletableFuture<Void> alter(String resourceName, List<AlterableConfig> operations, boolean validateOnly) {
        requireThisBroker(resourceName);
        for (AlterableConfig op : operations) {
            if (!DYNAMIC.contains(op.name())) {
                throw new InvalidRequestException("Cannot update config " + op.name()
                        + " dynamically; dynamic broker configs: " + DYNAMIC);
            }
        }
        Map<String, String> next = ConfigOperations.apply(topics.dynamicBrokerConfigs(), operations);
        return topics.alterBrokerConfigs(next, validateOnly);
    }
}
