package io.pier.protocol;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/** One kind of config resource (topic, broker, group) for DescribeConfigs and IncrementalAlterConfigs. */
public interface ConfigResourceType {

    /** An effective value and where it comes from. */
    record ConfigValue(String value, ConfigSource source, boolean readOnly) {}

    /** Every config of the resource; an unknown resource throws the ApiException to report. */
    Map<String, ConfigValue> describe(String resourceName);

    /** Applies SET/DELETE operations; durable before the future completes. */
    CompletableFuture<Void> alter(String resourceName, List<AlterableConfig> operations, boolean validateOnly);
}
