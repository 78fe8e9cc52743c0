package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.ShareGroups;
import io.pier.service.ShareOffsets.OffsetSummary;
import io.pier.service.ShareOffsets;
import io.pier.service.TopicService;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsResponse;

/**
 * The share-group offset admin APIs: DescribeShareGroupOffsets (start offset and lag per
 * share-partition), AlterShareGroupOffsets and DeleteShareGroupOffsets (Empty groups only).
 * Share-partition state is read and changed by {@link ShareOffsets}.
 */
public final class ShareGroupOffsetHandlers {
    private static final int LEADER_EPOCH = 0;

    private final ShareGroups groups;
    private final ShareOffsets shares;
    private final TopicService topics;
    private final Access access;

    public ShareGroupOffsetHandlers(ShareGroups groups, ShareOffsets shares, TopicService topics, Access access) {
        this.groups = groups;
        this.shares = shares;
        this.topics = topics;
        this.access = access;
    }

    /**
     * DescribeShareGroupOffsets v0-1. Null topics means every share-partition the group has state
     * for; a partition the group never fetched, or of an unknown topic, has start offset -1.
     */
    public CompletableFuture<AbstractResponse> describeOffsets(ApiRequest request) {
        boolean withLag = request.version() >= 1;
        List<CompletableFuture<DescribeShareGroupOffsetsResponseGroup>> described = new ArrayList<>();
        for (DescribeShareGroupOffsetsRequestGroup g : request.bodyAs(DescribeShareGroupOffsetsRequest.class)
                .data().groups()) {
            if (!access.group(request, AclOperation.DESCRIBE, g.groupId())) {
                described.add(CompletableFuture.completedFuture(new DescribeShareGroupOffsetsResponseGroup()
                        .setGroupId(g.groupId()).setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                        .setErrorMessage(Errors.GROUP_AUTHORIZATION_FAILED.message())));
                continue;
            }
            boolean allTopics = g.topics() == null;
            Predicate<String> mayDescribe = access.topics(request, AclOperation.DESCRIBE);
            described.add(requested(g).thenCompose(wanted -> {
                if (allTopics) {
                    // "All topics" means all the principal may see.
                    wanted.keySet().removeIf(t -> !access.topic(request, AclOperation.DESCRIBE, t));
                }
                return describeGroup(g.groupId(), wanted, withLag, mayDescribe);
            }).exceptionally(failure -> {
                // the group's state on another gateway node could not be read: Admin retries a retriable error
                Errors error = Errors.forException(Futures.unwrap(failure));
                return new DescribeShareGroupOffsetsResponseGroup().setGroupId(g.groupId())
                        .setErrorCode(error.code()).setErrorMessage(error.message());
            }));
        }
        return Futures.all(described).thenApply(list -> {
            DescribeShareGroupOffsetsResponseData out = new DescribeShareGroupOffsetsResponseData();
            out.groups().addAll(list);
            return new DescribeShareGroupOffsetsResponse(out);
        });
    }

    /** Topic name to partitions, in request order; for null topics, what the group has state for. */
    private CompletableFuture<Map<String, List<Integer>>> requested(DescribeShareGroupOffsetsRequestGroup g) {
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        if (g.topics() != null) {
            for (DescribeShareGroupOffsetsRequestTopic t : g.topics()) {
                byTopic.computeIfAbsent(t.topicName(), n -> new ArrayList<>()).addAll(t.partitions());
            }
            return CompletableFuture.completedFuture(byTopic);
        }
        return shares.stateKeys(g.groupId()).thenApply(keys -> {
            for (SharePartitionKey key : keys) {
                TopicMetadata topic = topics.topic(key.topicId());
                if (topic != null && key.partition() < topic.partitionCount()) {
                    byTopic.computeIfAbsent(topic.name(), n -> new ArrayList<>()).add(key.partition());
                }
            }
            return byTopic;
        });
    }

    private CompletableFuture<DescribeShareGroupOffsetsResponseGroup> describeGroup(String groupId,
            Map<String, List<Integer>> requested, boolean withLag, Predicate<String> mayDescribe) {
        List<CompletableFuture<DescribeShareGroupOffsetsResponseTopic>> described = new ArrayList<>();
        requested.forEach((name, indexes) -> {
            boolean allowed = mayDescribe.test(name);
            TopicMetadata topic = allowed ? topics.topic(name) : null;
            List<CompletableFuture<DescribeShareGroupOffsetsResponsePartition>> parts = new ArrayList<>();
            for (int index : indexes) {
                if (!allowed) {
                    parts.add(CompletableFuture.completedFuture(new DescribeShareGroupOffsetsResponsePartition()
                            .setPartitionIndex(index)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                            .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message())));
                    continue;
                }
                // A negative index names no partition, as one past the topic's end does: no state
                // (SharePartitionKey would throw, and the client would see UNKNOWN_SERVER_ERROR).
                CompletableFuture<OffsetSummary> summary = topic == null || index < 0
                        ? CompletableFuture.completedFuture(OffsetSummary.NONE)
                        : shares.summary(new TopicPartition(name, index),
                                new SharePartitionKey(groupId, topic.id(), index));
                parts.add(summary.handle((s, failure) -> {
                    DescribeShareGroupOffsetsResponsePartition p = new DescribeShareGroupOffsetsResponsePartition()
                            .setPartitionIndex(index);
                    if (failure != null) {
                        // read on another gateway node, which failed or does not serve it any more
                        Errors error = Errors.forException(Futures.unwrap(failure));
                        return p.setStartOffset(-1).setErrorCode(error.code()).setErrorMessage(error.message());
                    }
                    p.setStartOffset(s.startOffset()).setLeaderEpoch(LEADER_EPOCH);
                    return withLag ? p.setLag(s.lag()) : p;
                }));
            }
            described.add(Futures.all(parts).thenApply(list -> new DescribeShareGroupOffsetsResponseTopic()
                    .setTopicName(name)
                    .setTopicId(topic == null ? Uuid.ZERO_UUID : topic.id())
                    .setPartitions(list)));
        });
        return Futures.all(described).thenApply(list -> new DescribeShareGroupOffsetsResponseGroup()
                .setGroupId(groupId).setTopics(list));
    }

    /**
     * AlterShareGroupOffsets v0: creates the group if missing, refuses a group with members
     * (NON_EMPTY_GROUP), then re-initialises each named share-partition at its new start offset.
     */
    public CompletableFuture<AbstractResponse> alterOffsets(ApiRequest request) {
        AlterShareGroupOffsetsRequestData in = request.bodyAs(AlterShareGroupOffsetsRequest.class).data();
        return groups.offsetsChangeable(in.groupId(), true).thenCompose(error -> {
            List<CompletableFuture<AlterShareGroupOffsetsResponseTopic>> altered = new ArrayList<>();
            for (AlterShareGroupOffsetsRequestTopic t : in.topics()) {
                altered.add(alterTopic(in.groupId(), t,
                        error != Errors.NONE || access.topic(request, AclOperation.READ, t.topicName())
                                ? error : Errors.TOPIC_AUTHORIZATION_FAILED));
            }
            return Futures.all(altered).thenApply(list -> {
                AlterShareGroupOffsetsResponseData out = new AlterShareGroupOffsetsResponseData()
                        .setErrorCode(error.code())
                        .setErrorMessage(error == Errors.NONE ? null : message(in.groupId(), error));
                list.forEach(out.responses()::add);
                return new AlterShareGroupOffsetsResponse(out);
            });
        });
    }

    private CompletableFuture<AlterShareGroupOffsetsResponseTopic> alterTopic(String groupId,
            AlterShareGroupOffsetsRequestTopic t, Errors groupError) {
        TopicMetadata topic = topics.topic(t.topicName());
        List<CompletableFuture<AlterShareGroupOffsetsResponsePartition>> parts = new ArrayList<>();
        for (AlterShareGroupOffsetsRequestPartition p : t.partitions()) {
            Errors error = groupError;
            if (error == Errors.NONE && (topic == null || p.partitionIndex() < 0
                    || p.partitionIndex() >= topic.partitionCount())) {
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
            } else if (error == Errors.NONE && p.startOffset() < 0) {
                error = Errors.INVALID_REQUEST;
            }
            AlterShareGroupOffsetsResponsePartition result = new AlterShareGroupOffsetsResponsePartition()
                    .setPartitionIndex(p.partitionIndex());
            if (error != Errors.NONE) {
                parts.add(CompletableFuture.completedFuture(
                        result.setErrorCode(error.code()).setErrorMessage(error.message())));
                continue;
            }
            parts.add(shares.reset(new SharePartitionKey(groupId, topic.id(), p.partitionIndex()), p.startOffset())
                    .thenApply(v -> result));
        }
        return Futures.all(parts).thenApply(list -> new AlterShareGroupOffsetsResponseTopic()
                .setTopicName(t.topicName())
                .setTopicId(topic == null ? Uuid.ZERO_UUID : topic.id())
                .setPartitions(list));
    }

    /**
     * DeleteShareGroupOffsets v0: for an Empty group, drops the state of every share-partition of
     * the named topics, so the next fetch starts from {@code share.auto.offset.reset} again.
     */
    public CompletableFuture<AbstractResponse> deleteOffsets(ApiRequest request) {
        DeleteShareGroupOffsetsRequestData in = request.bodyAs(DeleteShareGroupOffsetsRequest.class).data();
        return groups.offsetsChangeable(in.groupId(), false).thenCompose(error -> {
            DeleteShareGroupOffsetsResponseData out = new DeleteShareGroupOffsetsResponseData();
            if (error != Errors.NONE) {
                return CompletableFuture.completedFuture(new DeleteShareGroupOffsetsResponse(
                        out.setErrorCode(error.code()).setErrorMessage(message(in.groupId(), error))));
            }
            return shares.stateKeys(in.groupId()).thenCompose(keys -> {
                List<CompletableFuture<DeleteShareGroupOffsetsResponseTopic>> deleted = new ArrayList<>();
                for (DeleteShareGroupOffsetsRequestTopic t : in.topics()) {
                    deleted.add(access.topic(request, AclOperation.READ, t.topicName())
                            ? deleteTopic(t.topicName(), keys)
                            : CompletableFuture.completedFuture(new DeleteShareGroupOffsetsResponseTopic()
                                    .setTopicName(t.topicName()).setTopicId(Uuid.ZERO_UUID)
                                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                                    .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message())));
                }
                return Futures.all(deleted);
            }).handle((list, failure) -> {
                if (failure != null) {
                    // another gateway node's state could not be changed: a retriable error for Admin
                    Errors failed = Errors.forException(Futures.unwrap(failure));
                    return new DeleteShareGroupOffsetsResponse(out.setErrorCode(failed.code())
                            .setErrorMessage(failed.message()));
                }
                out.setResponses(list);
                return new DeleteShareGroupOffsetsResponse(out);
            });
        });
    }

    private CompletableFuture<DeleteShareGroupOffsetsResponseTopic> deleteTopic(String name,
            List<SharePartitionKey> keys) {
        TopicMetadata topic = topics.topic(name);
        DeleteShareGroupOffsetsResponseTopic result = new DeleteShareGroupOffsetsResponseTopic().setTopicName(name);
        if (topic == null) {
            return CompletableFuture.completedFuture(result.setTopicId(Uuid.ZERO_UUID)
                    .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message()));
        }
        return CompletableFuture.allOf(keys.stream()
                        .filter(k -> k.topicId().equals(topic.id()))
                        .map(shares::deleteState)
                        .toArray(CompletableFuture[]::new))
                .thenApply(v -> result.setTopicId(topic.id()));
    }

    private static String message(String groupId, Errors error) {
        return switch (error) {
            case NON_EMPTY_GROUP -> "The share group " + groupId + " has active members; stop them first.";
            case GROUP_ID_NOT_FOUND -> "Group " + groupId + " not found.";
            default -> error.message();
        };
    }
}
