package io.pier.protocol;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;

/** Applies IncrementalAlterConfigs operations to a resource's current overrides. */
final class ConfigOperations {
    private ConfigOperations() {}

    static Map<String, String> apply(Map<String, String> current, List<AlterableConfig> operations) {
        Map<String, String> next = new LinkedHashMap<>(current);
        Set<String> seen = new HashSet<>();
        for (AlterableConfig op : operations) {
            if (!seen.add(op.name())) {
                throw new InvalidRequestException("Error due to duplicate config keys: " + op.name());
            }
            AlterConfigOp.OpType type = AlterConfigOp.OpType.forId(op.configOperation());
            if (type == null) {
                throw new InvalidRequestException("Unknown config operation " + op.configOperation());
            }
            switch (type) {
                case SET -> {
                    if (op.value() == null) {
                        throw new InvalidConfigurationException("Null value not supported for : " + op.name());
                    }
                    next.put(op.name(), op.value());
                }
                case DELETE -> next.remove(op.name());
                default -> throw new InvalidConfigurationException("Config value " + type.name().toLowerCase()
                        + " is not allowed for config key " + op.name() + ": no list-type configs are alterable");
            }
        }
        return next;
    }
}
