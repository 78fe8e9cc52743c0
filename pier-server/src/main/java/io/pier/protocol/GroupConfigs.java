package io.pier.protocol;

import io.pier.group.GroupConfig;
import io.pier.group.GroupConfigEntry;
import io.pier.service.ShareGroups;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;

/**
 * Group configs ({@code share.*}, {@code consumer.*} and a share group's {@code
 * errors.deadletterqueue.*}), resource type GROUP: stored per group id, even before it has members.
 */
public final class GroupConfigs implements ConfigResourceType {
    private final ShareGroups groups;

    public GroupConfigs(ShareGroups groups) {
        this.groups = groups;
    }

    @Override
    public Map<String, ConfigValue> describe(String groupId) {
        requireName(groupId);
        GroupConfig config = groups.config(groupId);
        Map<String, ConfigValue> out = new LinkedHashMap<>();
        for (GroupConfigEntry e : config.entries()) {
            out.put(e.name(), new ConfigValue(e.value(),
                    e.isDefault() ? ConfigSource.DEFAULT_CONFIG : ConfigSource.GROUP_CONFIG, false));
        }
        return out;
    }

    @Override
    public CompletableFuture<Void> alter(String groupId, List<AlterableConfig> operations, boolean validateOnly) {
        requireName(groupId);
        Map<String, String> changes = new HashMap<>();
        for (AlterableConfig op : operations) {
            AlterConfigOp.OpType type = AlterConfigOp.OpType.forId(op.configOperation());
            if (type == AlterConfigOp.OpType.SET) {
                changes.put(op.name(), op.value());
            } else if (type == AlterConfigOp.OpType.DELETE) {
                changes.put(op.name(), null);
            } else {
                throw new InvalidConfigurationException("Config operation " + type + " is not allowed for " + op.name());
            }
        }
        return groups.alterConfig(groupId, changes, validateOnly).thenApply(result -> {
            if (result.error() != Errors.NONE) {
                throw result.error().exception(result.errorMessage());
            }
            return null;
        });
    }

    private static void requireName(String groupId) {
        if (groupId == null || groupId.isEmpty()) {
            throw new InvalidRequestException("Group name must not be empty");
        }
    }
}
