package io.pier.server;

import io.pier.common.Clock;
import io.pier.group.AlterConfigResult;
import io.pier.group.GroupConfig;
import io.pier.group.GroupDescription;
import io.pier.group.GroupListing;
import io.pier.group.HeartbeatRequest;
import io.pier.group.HeartbeatResponse;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.group.ShareGroupCoordinator;
import io.pier.group.ShareGroupsSnapshot;
import io.pier.group.TopicInfo;
import io.pier.group.TopicLookup;
import io.pier.share.ShareConfig;
import io.pier.state.DurableSharePersister;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * Runs the share-group coordinator on its owning shard and publishes each group's effective
 * configuration as an immutable snapshot, so share-partitions on other shards read it lock-free.
 */
public final class ShareGroups {
    private final Shard owner;
    private final Clock clock;
    private final TopicService topics;
    private final ShareGroupCoordinator coordinator;
    private final GroupConfig defaults;
    private final DurableSharePersister existence;
    private volatile Map<String, GroupConfig> configs = Map.of();

    /**
     * @param existence where group existence is made durable (created on first heartbeat, gone on
     *     delete)
     */
    ShareGroups(Shard owner, Clock clock, TopicService topics, ShareGroupBrokerConfig brokerConfig,
            DurableSharePersister existence) {
        this.owner = owner;
        this.existence = existence;
        this.clock = clock;
        this.topics = topics;
        this.defaults = GroupConfig.defaults(brokerConfig);
        TopicLookup lookup = new TopicLookup() {
            @Override
            public Optional<TopicInfo> byName(String name) {
                return Optional.ofNullable(topics.topic(name)).map(ShareGroups::info);
            }

            @Override
            public Optional<TopicInfo> byId(Uuid id) {
                return Optional.ofNullable(topics.topic(id)).map(ShareGroups::info);
            }
        };
        List<ShareGroupsSnapshot.Group> known = new ArrayList<>();
        existence.groups().forEach(id -> known.add(new ShareGroupsSnapshot.Group(id, 0)));
        ShareGroupsSnapshot restored = new ShareGroupsSnapshot(known, topics.allGroupConfigs());
        this.coordinator = new ShareGroupCoordinator(brokerConfig, lookup, restored);
        publishConfigs();
        owner.execute(() -> owner.addTicker(nowMs -> {
            if (nowMs >= coordinator.nextDeadlineMs()) {
                // Kafka does not release a member's records when its group session times out, only
                // when its share session ends; the locks expire on their own.
                coordinator.expireSessions(nowMs);
            }
        }));
        topics.addTopicListener(() -> owner.execute(() -> coordinator.onTopicsChanged(clock.monoMs())));
    }

    private static TopicInfo info(TopicMetadata t) {
        return new TopicInfo(t.name(), t.id(), t.partitionCount());
    }

    /** A heartbeat that created a group answers only once the group's existence is durable. */
    public CompletableFuture<HeartbeatResponse> heartbeat(HeartbeatRequest request) {
        return owner.call(() -> coordinator.heartbeat(request, clock.monoMs()))
                .thenCompose(r -> r.error() != Errors.NONE || existence.groups().contains(request.groupId())
                        ? CompletableFuture.completedFuture(r)
                        : existence.recordGroup(request.groupId()).thenApply(v -> r));
    }

    public CompletableFuture<Optional<GroupDescription>> describe(String groupId) {
        return owner.call(() -> coordinator.describe(groupId));
    }

    public CompletableFuture<List<GroupListing>> list() {
        return owner.call(coordinator::listGroups);
    }

    /**
     * Deletes an empty group. The coordinator changes on its shard; the durable records go after,
     * off the shard, so a metadata or state fsync never stalls the partitions it owns.
     */
    public CompletableFuture<Errors> delete(String groupId) {
        return owner.call(() -> coordinator.deleteGroup(groupId)).thenCompose(result -> {
            if (result != Errors.NONE) {
                return CompletableFuture.completedFuture(result);
            }
            return topics.putGroupConfigs(groupId, Map.of())
                    .thenCompose(v -> existence.deleteGroup(groupId))
                    .thenCompose(v -> owner.call(() -> {
                        publishConfigs();
                        return result;
                    }));
        });
    }

    /**
     * NONE if the group's offsets may be altered or deleted now (it is Empty), else
     * NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND; {@code createIfMissing} creates an Empty group first.
     */
    public CompletableFuture<Errors> offsetsChangeable(String groupId, boolean createIfMissing) {
        return owner.call(() -> coordinator.checkOffsetsChangeable(groupId, createIfMissing))
                .thenCompose(result -> result != Errors.NONE || existence.groups().contains(groupId)
                        ? CompletableFuture.completedFuture(result)
                        // A group created by AlterShareGroupOffsets must outlive a restart too.
                        : existence.recordGroup(groupId).thenApply(v -> result));
    }

    /** The group's effective configuration; broker defaults for a group never configured. */
    public GroupConfig config(String groupId) {
        return configs.getOrDefault(groupId, defaults);
    }

    public ShareConfig shareConfig(String groupId) {
        GroupConfig c = config(groupId);
        return new ShareConfig(c.effectiveRecordLockDurationMs(), c.effectiveDeliveryCountLimit(),
                c.effectivePartitionMaxRecordLocks(), c.effectiveRenewAcknowledgeEnable());
    }

    /**
     * Validates and applies config changes (null value = delete); the caller hears of them once
     * they are durable, written off the coordinator's shard.
     */
    public CompletableFuture<AlterConfigResult> alterConfig(String groupId, Map<String, String> changes,
            boolean validateOnly) {
        return owner.call(() -> {
            AlterConfigResult result = coordinator.alterGroupConfig(groupId, changes, validateOnly);
            boolean changed = result.error() == Errors.NONE && !validateOnly;
            return Map.entry(result, changed ? coordinator.groupConfig(groupId).overrides() : Map.<String, String>of());
        }).thenCompose(outcome -> {
            AlterConfigResult result = outcome.getKey();
            if (result.error() != Errors.NONE || validateOnly) {
                return CompletableFuture.completedFuture(result);
            }
            return topics.putGroupConfigs(groupId, outcome.getValue()).thenCompose(v -> owner.call(() -> {
                publishConfigs();
                return result;
            }));
        });
    }

    private void publishConfigs() {
        Map<String, GroupConfig> next = new HashMap<>();
        for (String id : coordinator.configuredGroupIds()) {
            next.put(id, coordinator.groupConfig(id));
        }
        configs = Map.copyOf(next);
    }
}
