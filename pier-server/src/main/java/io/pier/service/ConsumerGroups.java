package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.ClassicGroupConfig;
import io.pier.group.ClassicGroupCoordinator;
import io.pier.group.ClassicGroupDescription;
import io.pier.group.ClassicGroupListing;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicSync;
import io.pier.group.ClassicSyncResult;
import io.pier.group.OffsetExpiration;
import io.pier.group.PartitionKey;
import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import io.pier.group.consumer.ConsumerGroupCoordinator;
import io.pier.group.consumer.ConsumerGroupDescription;
import io.pier.group.consumer.ConsumerGroupListing;
import io.pier.group.consumer.ConsumerHeartbeat;
import io.pier.group.consumer.ConsumerHeartbeatResult;
import io.pier.state.CommittedOffset;
import io.pier.state.OffsetStore;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * Consumer groups, of the classic and the consumer (KIP-848) protocol, and their committed offsets.
 * Each shard runs a {@link ClassicGroupCoordinator} and a {@link ConsumerGroupCoordinator} for the
 * group ids that hash to it, beside the share-group coordinator of the same ids, so one group id
 * is one kind of group; an Empty group of either consumer protocol passes to the other when a
 * member of the other joins (its committed offsets stay). A parked JoinGroup or
 * SyncGroup is a callback held by the coordinator; its timeouts are one timer per shard in the
 * shard's {@link Deadlines}, armed at the coordinator's earliest deadline, so no thread ever waits.
 * Offsets are written to the {@link OffsetStore} and answered once durable.
 */
public final class ConsumerGroups {
    /** Kafka's {@code offset.metadata.max.bytes} default. */
    static final int DEFAULT_OFFSET_METADATA_MAX_BYTES = 4096;

    private final PartitionRegistry partitions;
    private final TopicService topics;
    private final ShareGroups shareGroups;
    private final OffsetStore offsets;
    private final Clock clock;
    private final int offsetMetadataMaxBytes;
    private final Slot[] slots;

    /** One shard's coordinator and the timer armed at its earliest deadline. */
    private static final class Slot {
        final Shard shard;
        final ClassicGroupCoordinator coordinator;
        final ConsumerGroupCoordinator consumer;
        final EarliestTimer timer;

        Slot(Shard shard, ClassicGroupCoordinator coordinator, ConsumerGroupCoordinator consumer) {
            this.shard = shard;
            this.timer = new EarliestTimer(shard);
            this.coordinator = coordinator;
            this.consumer = consumer;
        }

        long nextDeadlineMs() {
            return Math.min(coordinator.nextDeadlineMs(), consumer.nextDeadlineMs());
        }
    }

    /** One OffsetCommit, decoded. */
    public record CommitRequest(String groupId, int generationId, String memberId, String groupInstanceId,
            short apiVersion, Map<TopicPartition, Offset> offsets) {}

    /** One partition's offset to commit. */
    public record Offset(long offset, int leaderEpoch, String metadata) {}

    /** Committed offsets of a group, or the group-level error that stopped the fetch. */
    public record Fetched(Errors error, Map<TopicPartition, CommittedOffset> offsets) {}

    /** The outcome of an OffsetDelete: a group-level error, else one error per partition. */
    public record Deleted(Errors error, Map<TopicPartition, Errors> partitions) {}

    ConsumerGroups(PartitionRegistry partitions, TopicService topics, ShareGroups shareGroups, OffsetStore offsets,
            Clock clock, Map<String, String> config) {
        this.partitions = partitions;
        this.topics = topics;
        this.shareGroups = shareGroups;
        this.offsets = offsets;
        this.clock = clock;
        this.offsetMetadataMaxBytes = Integer.parseInt(config.getOrDefault("offset.metadata.max.bytes",
                String.valueOf(DEFAULT_OFFSET_METADATA_MAX_BYTES)));
        ClassicGroupConfig groupConfig = ClassicGroupConfig.fromProperties(config);
        ConsumerGroupBrokerConfig consumerConfig = ConsumerGroupBrokerConfig.fromProperties(config);
        TopicLookups lookup = new TopicLookups(topics);
        Shard[] shards = partitions.shards();
        slots = new Slot[shards.length];
        ConsumerGroupCoordinator.Timings timings = new ConsumerGroupCoordinator.Timings() {
            // The group's consumer.* configs, kept with its share.* ones on the same shard.
            @Override
            public int sessionTimeoutMs(String groupId) {
                return shareGroups.config(groupId).effectiveConsumerSessionTimeoutMs();
            }

            @Override
            public int heartbeatIntervalMs(String groupId) {
                return shareGroups.config(groupId).effectiveConsumerHeartbeatIntervalMs();
            }
        };
        for (int i = 0; i < shards.length; i++) {
            ConsumerGroupCoordinator consumer =
                    new ConsumerGroupCoordinator(consumerConfig, lookup, () -> Uuid.randomUuid().toString());
            consumer.timings(timings);
            slots[i] = new Slot(shards[i], new ClassicGroupCoordinator(groupConfig, () -> UUID.randomUUID().toString()),
                    consumer);
        }
        // Groups are not durable, their offsets are: a group with offsets is back, Empty, after a
        // restart (wiring time, before the shards run).
        for (String groupId : offsets.groups()) {
            slot(groupId).coordinator.restoreEmptyGroup(groupId, clock.monoMs());
        }
        shareGroups.refuseIdsOf(this::existsOnShard);
        topics.addTopicListener(this::retainLiveTopics);
        topics.addTopicListener(() -> {
            for (Slot s : slots) {
                s.shard.execute(() -> {
                    s.consumer.onTopicsChanged();
                    rearm(s);
                });
            }
        });
        retainLiveTopics();
    }

    private Slot slot(String groupId) {
        return slots[partitions.shardForKey(groupId).id()];
    }

    /** Shard thread of {@code groupId} only: whether a consumer group of either protocol holds this id. */
    boolean existsOnShard(String groupId) {
        Slot s = slot(groupId);
        return s.coordinator.exists(groupId) || s.consumer.exists(groupId);
    }

    /** Runs {@code work} on the group's shard, then re-arms that shard's timer. */
    private <T> CompletableFuture<T> onShard(String groupId, Function<Slot, T> work) {
        Slot s = slot(groupId);
        return s.shard.call(() -> {
            try {
                return work.apply(s);
            } finally {
                rearm(s);
            }
        });
    }

    /** As {@link #onShard} for work that answers through a callback, perhaps in a later cycle. */
    private <T> CompletableFuture<T> parkOnShard(String groupId, BiConsumer<Slot, Consumer<T>> work) {
        Slot s = slot(groupId);
        return s.shard.compose(() -> {
            CompletableFuture<T> answer = new CompletableFuture<>();
            try {
                work.accept(s, answer::complete);
            } finally {
                rearm(s);
            }
            return answer;
        });
    }

    /** Shard thread only: keeps one timer at the coordinator's earliest deadline. */
    private void rearm(Slot s) {
        s.timer.armAt(s.nextDeadlineMs(), () -> {
            long nowMs = s.shard.nowMs();
            s.coordinator.onDeadlines(nowMs);
            s.consumer.onDeadlines(nowMs);
            downgrade(s);
            rearm(s);
        });
    }

    /**
     * Shard thread only: groups whose last consumer-protocol member went pass to the classic
     * coordinator with their classic members (online downgrade, Kafka 4.4's default policy).
     */
    private static void downgrade(Slot s) {
        for (String groupId : s.consumer.takeDowngrades()) {
            s.coordinator.adopt(groupId, s.consumer.handOverToClassic(groupId), s.shard.nowMs());
        }
    }

    // ------------------------------------------------------------------ the classic protocol

    /** JoinGroup: answered when the join phase ends; a share group's id is refused. */
    public CompletableFuture<ClassicJoinResult> join(ClassicJoin request) {
        return parkOnShard(request.groupId() == null ? "" : request.groupId(), (s, reply) -> {
            if (shareGroups.existsOnShard(request.groupId())) {
                reply.accept(new ClassicJoinResult(Errors.INCONSISTENT_GROUP_PROTOCOL, -1, null, null, "", "",
                        false, List.of()));
            } else if (s.consumer.removeEmpty(request.groupId())) {
                s.coordinator.join(request, s.shard.nowMs(), reply);
            } else {
                // A classic member joins a consumer-protocol group with members (online migration).
                reply.accept(s.consumer.classicJoin(request, UUID.randomUUID().toString(), s.shard.nowMs()));
            }
        });
    }

    /** SyncGroup: a follower's waits for the leader's assignment. */
    public CompletableFuture<ClassicSyncResult> sync(ClassicSync request) {
        return parkOnShard(request.groupId() == null ? "" : request.groupId(), (s, reply) -> {
            if (s.consumer.exists(request.groupId())) {
                reply.accept(s.consumer.classicSync(request, s.shard.nowMs()));
            } else {
                s.coordinator.sync(request, s.shard.nowMs(), reply);
            }
        });
    }

    public CompletableFuture<Errors> heartbeat(String groupId, String memberId, String groupInstanceId,
            int generationId) {
        return onShard(groupId == null ? "" : groupId, s -> s.consumer.exists(groupId)
                ? s.consumer.classicHeartbeat(groupId, memberId, groupInstanceId, generationId, s.shard.nowMs())
                : s.coordinator.heartbeat(groupId, memberId, groupInstanceId, generationId, s.shard.nowMs()));
    }

    public CompletableFuture<ClassicLeave.Result> leave(String groupId, List<ClassicLeave.Member> members) {
        return onShard(groupId == null ? "" : groupId, s -> {
            if (!s.consumer.exists(groupId)) {
                return s.coordinator.leave(groupId, members, s.shard.nowMs());
            }
            ClassicLeave.Result result = s.consumer.classicLeave(groupId, members);
            downgrade(s);
            return result;
        });
    }

    /** What DescribeGroups shows; {@code otherType} true when the id is a group of another type. */
    public record Described(Optional<ClassicGroupDescription> group, boolean otherType) {}

    public CompletableFuture<Described> describe(String groupId) {
        return onShard(groupId, s -> new Described(s.coordinator.describe(groupId),
                shareGroups.existsOnShard(groupId) || s.consumer.exists(groupId)));
    }

    // ------------------------------------------------------------------ the consumer protocol (KIP-848)

    /**
     * ConsumerGroupHeartbeat. A joining member takes over a classic group's id: an Empty one (its
     * committed offsets stay) or one whose members use the embedded consumer protocol (online
     * upgrade); any other classic group or a share group refuses it with GROUP_ID_NOT_FOUND, as
     * Kafka does for a group of another type.
     */
    public CompletableFuture<ConsumerHeartbeatResult> consumerHeartbeat(ConsumerHeartbeat request) {
        String groupId = request.groupId() == null ? "" : request.groupId();
        return onShard(groupId, s -> {
            long nowMs = s.shard.nowMs();
            if (!groupId.isEmpty() && !s.consumer.exists(groupId)
                    && request.memberEpoch() == ConsumerHeartbeat.JOIN_EPOCH) {
                ConsumerHeartbeatResult invalid = s.consumer.validate(request);
                if (invalid != null) {
                    return invalid;
                }
                if (s.coordinator.isUpgradable(groupId)) {
                    // The first consumer-protocol member of a classic group (online upgrade).
                    s.consumer.adoptClassic(groupId, s.coordinator.handOver(groupId), nowMs);
                } else if (shareGroups.existsOnShard(groupId) || !s.coordinator.removeEmptyGroup(groupId)) {
                    return new ConsumerHeartbeatResult(Errors.GROUP_ID_NOT_FOUND,
                            "Group " + groupId + " is not a consumer group.", null, 0, 0, null);
                }
            }
            ConsumerHeartbeatResult result = s.consumer.heartbeat(request, nowMs);
            downgrade(s);
            return result;
        });
    }

    /** What ConsumerGroupDescribe shows; {@code otherType} true when the id is a group of another type. */
    public record ConsumerDescribed(Optional<ConsumerGroupDescription> group, boolean otherType) {}

    public CompletableFuture<ConsumerDescribed> consumerDescribe(String groupId) {
        return onShard(groupId, s -> new ConsumerDescribed(s.consumer.describe(groupId),
                shareGroups.existsOnShard(groupId) || s.coordinator.exists(groupId)));
    }

    /** Every consumer group of either protocol, by protocol. */
    public record Listings(List<ClassicGroupListing> classic, List<ConsumerGroupListing> consumer) {}

    public CompletableFuture<Listings> list() {
        List<CompletableFuture<Listings>> each = new ArrayList<>();
        for (Slot s : slots) {
            each.add(s.shard.call(() -> new Listings(s.coordinator.listGroups(), s.consumer.listGroups())));
        }
        return Futures.all(each).thenApply(lists -> {
            List<ClassicGroupListing> classic = new ArrayList<>();
            List<ConsumerGroupListing> consumer = new ArrayList<>();
            lists.forEach(l -> {
                classic.addAll(l.classic());
                consumer.addAll(l.consumer());
            });
            return new Listings(classic, consumer);
        });
    }

    /**
     * DeleteGroups of a classic group: NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND if
     * the id is no classic group; its offsets go with it before the answer.
     */
    public CompletableFuture<Errors> delete(String groupId) {
        return onShard(groupId, s -> s.consumer.exists(groupId)
                ? s.consumer.deleteGroup(groupId)
                : s.coordinator.deleteGroup(groupId)).thenCompose(error -> error == Errors.NONE
                ? offsets.deleteGroup(groupId).handle((v, failure) -> failure == null ? error : notWritten(failure))
                : CompletableFuture.completedFuture(error));
    }

    /** Offsets of deleted topics go with them (also those a crash left behind between the two). */
    private void retainLiveTopics() {
        Map<String, Uuid> live = new HashMap<>();
        for (TopicMetadata t : topics.topics()) {
            live.put(t.name(), t.id());
        }
        var unused = offsets.retainTopics(live); // a failure is fatal to the store, which reports it
    }

    /**
     * Commits offsets: per partition NONE once durable, or why not (an unknown topic or partition,
     * metadata too long, the group's refusal applied to every partition, or NOT_COORDINATOR when
     * the offset store could not write them: its log failed and the broker is stopping).
     */
    public CompletableFuture<Map<TopicPartition, Errors>> commit(CommitRequest request) {
        return commit(request, offsets::commit);
    }

    /**
     * TxnOffsetCommit: as {@link #commit}, but the offsets stay pending for {@code producerId}'s
     * transaction, durable and invisible to OffsetFetch, until its marker commits or drops them
     * ({@link OffsetStore#completePending}). {@code request.apiVersion()} is the OffsetCommit
     * version whose member checks apply.
     */
    public CompletableFuture<Map<TopicPartition, Errors>> commitTransactional(CommitRequest request,
            long producerId) {
        return commit(request, (groupId, accepted) -> offsets.commitPending(groupId, producerId, accepted));
    }

    /**
     * The transaction marker for a group (what the broker's TransactionMarkers writes for each
     * group of a transaction): {@code producerId}'s pending offsets become the group's committed
     * offsets, or are dropped; durable when the future completes. Idempotent.
     */
    public CompletableFuture<Void> completeTransaction(String groupId, long producerId, boolean commit) {
        return offsets.completePending(groupId, producerId, commit);
    }

    /** The partitions of {@code groupId} with a pending transactional offset (require_stable). */
    public Set<TopicPartition> unstablePartitions(String groupId) {
        return offsets.pendingPartitions(groupId);
    }

    private CompletableFuture<Map<TopicPartition, Errors>> commit(CommitRequest request,
            BiFunction<String, Map<TopicPartition, CommittedOffset>, CompletableFuture<Void>> store) {
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        Map<TopicPartition, CommittedOffset> accepted = new LinkedHashMap<>();
        long nowMs = clock.wallMs();
        request.offsets().forEach((tp, o) -> {
            TopicMetadata topic = topics.topic(tp.topic());
            if (topic == null || tp.partition() < 0 || tp.partition() >= topic.partitionCount()) {
                result.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            } else if (o.metadata() != null && o.metadata().length() > offsetMetadataMaxBytes) {
                result.put(tp, Errors.OFFSET_METADATA_TOO_LARGE);
            } else {
                result.put(tp, Errors.NONE);
                accepted.put(tp, new CommittedOffset(topic.id(), o.offset(), o.leaderEpoch(), o.metadata(), nowMs));
            }
        });
        if (request.groupId() == null || request.groupId().isEmpty()) {
            result.replaceAll((tp, e) -> Errors.INVALID_GROUP_ID);
            return CompletableFuture.completedFuture(result);
        }
        return onShard(request.groupId(), s -> {
            Errors error = validateCommit(s, request);
            if (error == Errors.NONE) {
                // A consumer-protocol member's commit from an older epoch, partition by partition.
                accepted.forEach((tp, o) -> {
                    Errors e = s.consumer.validateOffsetCommitPartition(request.groupId(), request.memberId(),
                            request.generationId(), new PartitionKey(o.topicId(), tp.partition()));
                    if (e != Errors.NONE) {
                        result.put(tp, e);
                    }
                });
            }
            return error;
        }).thenCompose(error -> {
            if (error != Errors.NONE) {
                accepted.keySet().forEach(tp -> result.put(tp, error));
                return CompletableFuture.completedFuture(result);
            }
            accepted.keySet().removeIf(tp -> result.get(tp) != Errors.NONE);
            if (accepted.isEmpty()) {
                return CompletableFuture.completedFuture(result);
            }
            return store.apply(request.groupId(), accepted).handle((v, failure) -> {
                if (failure != null) {
                    Errors notDurable = notWritten(failure);
                    accepted.keySet().forEach(tp -> result.put(tp, notDurable));
                }
                return result;
            });
        });
    }

    /**
     * The error for a change the offset store did not make durable: its log failed, and the broker
     * is stopping. Kafka answers NOT_COORDINATOR when the write to its offsets partition fails
     * with a storage error, and the client finds the coordinator again and retries. A failure of
     * any other kind is a broken invariant and fails the request.
     */
    private static Errors notWritten(Throwable failure) {
        var unused = Futures.storageFailure(failure);
        return Errors.NOT_COORDINATOR;
    }

    /** Shard thread only: whether the group takes this commit. */
    private Errors validateCommit(Slot s, CommitRequest request) {
        if (shareGroups.existsOnShard(request.groupId())) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (s.consumer.exists(request.groupId())) {
            return s.consumer.validateOffsetCommit(request.groupId(), request.memberId(), request.generationId(),
                    request.apiVersion());
        }
        return s.coordinator.validateOffsetCommit(request.groupId(), request.memberId(), request.groupInstanceId(),
                request.generationId(), request.apiVersion(), s.shard.nowMs());
    }

    /**
     * The committed offsets of {@code requested} partitions (null: every partition with one) of
     * {@code groupId}; a partition without one is left out.
     */
    public CompletableFuture<Fetched> fetch(String groupId, List<TopicPartition> requested) {
        return fetch(groupId, null, -1, requested);
    }

    /**
     * As {@link #fetch(String, List)} for a member of the group ({@code memberId} null and epoch
     * -1 for none): a consumer-protocol member must send its current epoch (STALE_MEMBER_EPOCH,
     * UNKNOWN_MEMBER_ID otherwise).
     */
    public CompletableFuture<Fetched> fetch(String groupId, String memberId, int memberEpoch,
            List<TopicPartition> requested) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(new Fetched(Errors.INVALID_GROUP_ID, Map.of()));
        }
        return onShard(groupId, s -> {
            if (shareGroups.existsOnShard(groupId)) {
                return new Fetched(Errors.GROUP_ID_NOT_FOUND, Map.of());
            }
            Errors member = s.consumer.validateOffsetFetch(groupId, memberId, memberEpoch);
            if (member != Errors.NONE) {
                return new Fetched(member, Map.of());
            }
            Map<TopicPartition, CommittedOffset> all = offsets.offsets(groupId);
            if (requested == null) {
                return new Fetched(Errors.NONE, all);
            }
            Map<TopicPartition, CommittedOffset> some = new HashMap<>();
            for (TopicPartition tp : requested) {
                CommittedOffset o = all.get(tp);
                if (o != null) {
                    some.put(tp, o);
                }
            }
            return new Fetched(Errors.NONE, some);
        });
    }

    /**
     * OffsetDelete: GROUP_ID_NOT_FOUND for no classic group, NON_EMPTY_GROUP while a non-consumer
     * protocol is in use, GROUP_SUBSCRIBED_TO_TOPIC for a topic the members consume.
     */
    public CompletableFuture<Deleted> deleteOffsets(String groupId, List<TopicPartition> requested) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(new Deleted(Errors.INVALID_GROUP_ID, Map.of()));
        }
        return onShard(groupId, s -> {
            if (shareGroups.existsOnShard(groupId)) {
                return new Deleted(Errors.GROUP_ID_NOT_FOUND, Map.of());
            }
            Map<TopicPartition, Errors> result = new LinkedHashMap<>();
            for (TopicPartition tp : requested) {
                Errors e = s.consumer.exists(groupId)
                        ? s.consumer.validateOffsetDelete(groupId, tp.topic())
                        : s.coordinator.validateOffsetDelete(groupId, tp.topic());
                if (e == Errors.GROUP_ID_NOT_FOUND || e == Errors.NON_EMPTY_GROUP) {
                    return new Deleted(e, Map.of());
                }
                result.put(tp, e);
            }
            return new Deleted(Errors.NONE, result);
        }).thenCompose(d -> {
            if (d.error() != Errors.NONE) {
                return CompletableFuture.completedFuture(d);
            }
            List<TopicPartition> gone = new ArrayList<>();
            d.partitions().forEach((tp, e) -> {
                if (e == Errors.NONE) {
                    gone.add(tp);
                }
            });
            return offsets.delete(groupId, gone).handle((v, failure) -> failure == null ? d
                    : new Deleted(notWritten(failure), Map.of()));
        });
    }

    // ------------------------------------------------------------------ metrics

    /** What one shard's coordinators hold, for the metrics snapshot. */
    record OnShard(List<ClassicGroupListing> classic, List<ConsumerGroupListing> consumer, long classicRebalances,
            long consumerRebalances) {}

    /** Shard thread of {@code shard} only: its groups of both protocols and their rebalance counts. */
    OnShard groupsOn(Shard shard) {
        Slot s = slots[shard.id()];
        return new OnShard(s.coordinator.listGroups(), s.consumer.listGroups(), s.coordinator.rebalances(),
                s.consumer.rebalances());
    }

    /**
     * The duty step that expires committed offsets of {@code shard}'s groups, and the Empty groups
     * left without any ({@code offsets.retention.*}); see {@link OffsetExpiry}.
     */
    DutyStep offsetExpiry(Shard shard, OffsetExpiration.Config config) {
        Slot s = slots[shard.id()];
        return new OffsetExpiry(s.shard, s.coordinator, s.consumer, offsets, groupId -> slot(groupId) == s, clock,
                config).step();
    }
}
