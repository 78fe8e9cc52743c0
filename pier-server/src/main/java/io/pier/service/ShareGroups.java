package io.pier.service;

import io.pier.group.AlterConfigResult;
import io.pier.group.GroupConfig;
import io.pier.group.GroupDescription;
import io.pier.group.GroupListing;
import io.pier.group.HeartbeatRequest;
import io.pier.group.HeartbeatResponse;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.group.ShareGroupCoordinator;
import io.pier.group.ShareGroupsSnapshot;
import io.pier.group.TopicLookup;
import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import io.pier.share.ReleaseBackoff;
import io.pier.share.ShareConfig;
import io.pier.state.ShareStateStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The share-group coordinators: one per shard, each owning the groups whose ids hash to that shard
 * (as Kafka spreads groups over the partitions of {@code __consumer_offsets}), run only there.
 * Each coordinator publishes its groups' effective configuration as an immutable snapshot, so
 * share-partitions on other shards read it without a lock.
 */
public final class ShareGroups {
    private final PartitionRegistry partitions;
    private final TopicService topics;
    private final GroupConfig defaults;
    private final ShareStateStore existence;
    private final Slot[] slots;
    /** Shard thread only: whether a group of another type holds an id (set while wiring). */
    private volatile Predicate<String> otherGroupIds = id -> false;
    /** Whether a group's {@code errors.deadletterqueue.topic.name} is honoured (not on a gateway node). */

    /** One shard's coordinator and what it last published. */
    private static final class Slot {
        final Shard shard;
        final ShareGroupCoordinator coordinator;
        volatile Map<String, GroupConfig> configs = Map.of();

        Slot(Shard shard, ShareGroupCoordinator coordinator) {
            this.shard = shard;
            this.coordinator = coordinator;
        }

        /** Shard thread only. */
        void publishConfigs() {
            Map<String, GroupConfig> next = new HashMap<>();
            for (String id : coordinator.configuredGroupIds()) {
                next.put(id, coordinator.groupConfig(id));
            }
            configs = Map.copyOf(next);
        }
    }

    /**
     * @param existence where group existence is made durable (created on first heartbeat, gone on
     *     delete)
     */
    ShareGroups(PartitionRegistry partitions, TopicService topics, ShareGroupBrokerConfig brokerConfig,
            ConsumerGroupBrokerConfig consumerConfig, ShareStateStore existence) {
        this.partitions = partitions;
        this.existence = existence;
        this.topics = topics;
        this.defaults = GroupConfig.defaults(brokerConfig, consumerConfig);
        TopicLookup lookup = new TopicLookups(topics);
        Shard[] shards = partitions.shards();
        List<List<ShareGroupsSnapshot.Group>> known = new ArrayList<>();
        List<Map<String, Map<String, String>>> configs = new ArrayList<>();
        for (int i = 0; i < shards.length; i++) {
            known.add(new ArrayList<>());
            configs.add(new HashMap<>());
        }
        existence.groups().forEach(id -> known.get(partitions.shardForKey(id).id())
                .add(new ShareGroupsSnapshot.Group(id, 0)));
        topics.allGroupConfigs().forEach((id, c) -> configs.get(partitions.shardForKey(id).id()).put(id, c));
        slots = new Slot[shards.length];
        for (int i = 0; i < shards.length; i++) {
            ShareGroupCoordinator coordinator = new ShareGroupCoordinator(brokerConfig, consumerConfig, lookup,
                    new ShareGroupsSnapshot(known.get(i), configs.get(i)));
            slots[i] = new Slot(shards[i], coordinator);
            slots[i].publishConfigs();
        }
        topics.addTopicListener(() -> {
            for (Slot s : slots) {
                s.shard.execute(() -> s.coordinator.onTopicsChanged(s.shard.nowMs()));
            }
        });
    }

    private Slot slot(String groupId) {
        return slots[partitions.shardForKey(groupId).id()];
    }

    /** The duty step that expires member sessions of the groups {@code shard} coordinates. */
    DutyStep sessionExpiry(Shard shard) {
        ShareGroupCoordinator coordinator = slots[shard.id()].coordinator;
        return new DutyStep() {
            @Override
            public int onCycle(long nowMs) {
                if (nowMs < coordinator.nextDeadlineMs()) {
                    return 0;
                }
                // Kafka does not release a member's records when its group session times out, only
                // when its share session ends; the locks expire on their own.
                return coordinator.expireSessions(nowMs).size();
            }

            @Override
            public long nextDeadlineMs() {
                return coordinator.nextDeadlineMs();
            }

            @Override
            public String toString() {
                return "share-group session expiry";
            }
        };
    }

    /** Shard thread of {@code groupId} only: whether a share group holds this id. */
    boolean existsOnShard(String groupId) {
        return slot(groupId).coordinator.exists(groupId);
    }

    /** While wiring: ids that {@code otherGroupIds} holds are refused here (one group-id space). */
    void refuseIdsOf(Predicate<String> otherGroupIds) {
        this.otherGroupIds = otherGroupIds;
    }

    /**
     * A heartbeat that created a group answers only once the group's existence is durable. If it
     * cannot be recorded, the answer is an error the client retries after finding the coordinator
     * again: NOT_COORDINATOR when this node no longer serves the group's state (a gateway node
     * that woke from a pause past its session, still taking itself for the coordinator), else
     * COORDINATOR_NOT_AVAILABLE. Never the write's own error: kafka-clients takes an error a
     * heartbeat may not return (NOT_LEADER_OR_FOLLOWER, a storage error) as fatal, and that member
     * never joins again (GatewayNemesisIT: every consumer of the group, after a SIGCONT).
     */
    public CompletableFuture<HeartbeatResponse> heartbeat(HeartbeatRequest request) {
        Slot s = slot(request.groupId());
        return s.shard.call(() -> otherGroupIds.test(request.groupId())
                        ? new HeartbeatResponse(Errors.GROUP_ID_NOT_FOUND,
                                "Group " + request.groupId() + " is not a share group.", null, 0, 0, null)
                        : s.coordinator.heartbeat(request, s.shard.nowMs()))
                .thenCompose(r -> durableIfCreated(request.groupId(), r.error(), r)
                        .exceptionally(failure -> notRecorded(request.groupId(), failure)));
    }

    private static HeartbeatResponse notRecorded(String groupId, Throwable failure) {
        Throwable cause = Futures.unwrap(failure);
        boolean elsewhere = cause instanceof NotLeaderOrFollowerException;
        return new HeartbeatResponse(elsewhere ? Errors.NOT_COORDINATOR : Errors.COORDINATOR_NOT_AVAILABLE,
                "the existence of share group " + groupId + " could not be recorded here: " + cause.getMessage(),
                null, 0, 0, null);
    }

    /**
     * {@code answer} once the group is known to outlive a restart: at once when {@code error} says
     * nothing was created or the group is already recorded, else after recording it.
     */
    private <T> CompletableFuture<T> durableIfCreated(String groupId, Errors error, T answer) {
        if (error != Errors.NONE || existence.groups().contains(groupId)) {
            return CompletableFuture.completedFuture(answer);
        }
        return existence.recordGroup(groupId).thenApply(v -> answer);
    }

    public CompletableFuture<Optional<GroupDescription>> describe(String groupId) {
        Slot s = slot(groupId);
        return s.shard.call(() -> s.coordinator.describe(groupId));
    }

    /**
     * True if {@code groupId} is a share group whose existence is durable here: a gateway answers
     * a DeleteGroups for it itself and forwards the others. Any thread (the persister's published view).
     */
    public boolean isShareGroup(String groupId) {
        return existence.groups().contains(groupId);
    }

    /**
     * Gateway: the share groups whose existence this node now serves (a state partition it took
     * over) are known to their coordinators here, Empty until their members come.
     */
    public CompletableFuture<Void> restoreGroups(Set<String> groupIds) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (String id : groupIds) {
            Slot s = slot(id);
            all.add(s.shard.call(() -> {
                s.coordinator.restoreGroup(id);
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /**
     * Gateway: the share groups {@code moved} names are coordinated by another node from now on
     * (the state partition of their existence went there); their coordinators here drop them.
     */
    public CompletableFuture<Void> releaseGroups(java.util.function.Predicate<String> moved) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Slot s : slots) {
            all.add(s.shard.call(() -> {
                for (GroupListing g : s.coordinator.listGroups()) {
                    if (moved.test(g.groupId())) {
                        s.coordinator.releaseGroup(g.groupId());
                    }
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /** Every group of every coordinator. */
    public CompletableFuture<List<GroupListing>> list() {
        List<CompletableFuture<List<GroupListing>>> each = new ArrayList<>();
        for (Slot s : slots) {
            each.add(s.shard.call(s.coordinator::listGroups));
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<GroupListing> all = new ArrayList<>();
            each.forEach(f -> all.addAll(f.join()));
            return all;
        });
    }

    /**
     * Deletes an empty group. The coordinator changes on its shard; the durable records go after,
     * off the shard, so a metadata or state fsync never stalls the partitions it owns.
     */
    public CompletableFuture<Errors> delete(String groupId) {
        Slot s = slot(groupId);
        return s.shard.call(() -> s.coordinator.deleteGroup(groupId)).thenCompose(result -> {
            if (result != Errors.NONE) {
                return CompletableFuture.completedFuture(result);
            }
            return topics.putGroupConfigs(groupId, Map.of())
                    .thenCompose(v -> existence.deleteGroup(groupId))
                    .thenCompose(v -> s.shard.call(() -> {
                        s.publishConfigs();
                        return result;
                    }));
        });
    }

    /**
     * NONE if the group's offsets may be altered or deleted now (it is Empty), else
     * NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND (also for a consumer group's id); {@code createIfMissing}
     * creates an Empty group first.
     */
    public CompletableFuture<Errors> offsetsChangeable(String groupId, boolean createIfMissing) {
        Slot s = slot(groupId);
        // A group created by AlterShareGroupOffsets must outlive a restart too.
        // An id a consumer group holds is not a share group's: Kafka's GROUP_ID_NOT_FOUND, nothing created.
        return s.shard.call(() -> otherGroupIds.test(groupId) ? Errors.GROUP_ID_NOT_FOUND
                        : s.coordinator.checkOffsetsChangeable(groupId, createIfMissing))
                .thenCompose(result -> durableIfCreated(groupId, result, result));
    }

    /** The group's effective configuration; broker defaults for a group never configured. */
    public GroupConfig config(String groupId) {
        return slot(groupId).configs.getOrDefault(groupId, defaults);
    }

    public ShareConfig shareConfig(String groupId) {
        GroupConfig c = config(groupId);
        return new ShareConfig(c.effectiveRecordLockDurationMs(), c.effectiveDeliveryCountLimit(),
                c.effectivePartitionMaxRecordLocks(), c.effectiveRenewAcknowledgeEnable(),
                c.effectiveDeadLetterTopic() != null,
                new ReleaseBackoff(c.effectiveReleaseBackoffInitialMs(), c.effectiveReleaseBackoffMultiplier(),
                        c.effectiveReleaseBackoffMaxMs(), c.effectiveReleaseBackoffLockExpiry()),
                c.effectiveOrderByKey());
    }

    /**
     * Validates and applies config changes (null value = delete); the caller hears of them once
     * they are durable, written off the coordinator's shard.
     */
    public CompletableFuture<AlterConfigResult> alterConfig(String groupId, Map<String, String> changes,
            boolean validateOnly) {
        Slot s = slot(groupId);
        return s.shard.call(() -> {
            AlterConfigResult result = s.coordinator.alterGroupConfig(groupId, changes, validateOnly);
            boolean changed = result.error() == Errors.NONE && !validateOnly;
            return Map.entry(result, changed ? s.coordinator.groupConfig(groupId).overrides() : Map.<String, String>of());
        }).thenCompose(outcome -> {
            AlterConfigResult result = outcome.getKey();
            if (result.error() != Errors.NONE || validateOnly) {
                return CompletableFuture.completedFuture(result);
            }
            return topics.putGroupConfigs(groupId, outcome.getValue()).thenCompose(v -> s.shard.call(() -> {
                s.publishConfigs();
                return result;
            }));
        });
    }

    /**
     * Gateway: makes the group's settings exactly {@code overrides}, as another gateway node set
     * them (every node applies each change from the upstream's config topic, its own included).
     */
    public CompletableFuture<AlterConfigResult> replaceConfig(String groupId, Map<String, String> overrides) {
        Slot s = slot(groupId);
        return s.shard.call(() -> s.coordinator.groupConfig(groupId).overrides()).thenCompose(current -> {
            Map<String, String> changes = new HashMap<>(overrides);
            current.keySet().forEach(k -> {
                if (!overrides.containsKey(k)) {
                    changes.put(k, null);
                }
            });
            if (changes.entrySet().stream().allMatch(e -> java.util.Objects.equals(current.get(e.getKey()), e.getValue()))) {
                return CompletableFuture.completedFuture(new AlterConfigResult(Errors.NONE, null));
            }
            return alterConfig(groupId, changes, false);
        });
    }

    /** Shard thread of {@code shard} only: the share groups it coordinates, for the metrics snapshot. */
    List<GroupListing> groupsOn(Shard shard) {
        return slots[shard.id()].coordinator.listGroups();
    }
}
