package io.pier.protocol;

import io.pier.service.TopicService;
import io.pier.state.TopicMetadata;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/** Topic configs: overrides stored with the topic over the broker's log defaults. */
public final class TopicConfigs implements ConfigResourceType {
    private final TopicService topics;

    public TopicConfigs(TopicService topics) {
        this.topics = topics;
    }

    @Override
    public Map<String, ConfigValue> describe(String name) {
        return effective(topics, require(name));
    }

    /** Every log config of {@code topic}: its own override, else the broker's default. */
    static Map<String, ConfigValue> effective(TopicService topics, TopicMetadata topic) {
        Map<String, ConfigValue> out = new LinkedHashMap<>();
        topics.logConfig(topic).asTopicConfigs().forEach((k, v) -> out.put(k, new ConfigValue(v,
                topic.configs().containsKey(k) ? ConfigSource.TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG, false)));
        return out;
    }

    @Override
    public CompletableFuture<Void> alter(String name, List<AlterableConfig> operations, boolean validateOnly) {
        TopicMetadata topic = require(name);
        Map<String, String> next = ConfigOperations.apply(topic.configs(), operations);
        return topics.alterTopicConfigs(name, next, validateOnly).thenApply(t -> null);
    }

    private TopicMetadata require(String name) {
        TopicMetadata topic = topics.topic(name);
        if (topic == null) {
            throw new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist.");
        }
        return topic;
    }
}
