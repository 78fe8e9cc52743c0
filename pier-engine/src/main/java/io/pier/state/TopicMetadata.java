package io.pier.state;

import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.Uuid;

/** One topic as the broker knows it: name, id, partition count and its config overrides. */
public record TopicMetadata(String name, Uuid id, int partitionCount, Map<String, String> configs) {
    public TopicMetadata {
        Objects.requireNonNull(name);
        Objects.requireNonNull(id);
        configs = Map.copyOf(configs);
        if (partitionCount < 1) {
            throw new IllegalArgumentException("partition count must be positive: " + partitionCount);
        }
    }

    public TopicMetadata withPartitionCount(int count) {
        return new TopicMetadata(name, id, count, configs);
    }

    public TopicMetadata withConfigs(Map<String, String> newConfigs) {
        return new TopicMetadata(name, id, partitionCount, newConfigs);
    }
}
