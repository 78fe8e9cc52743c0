package io.pier.protocol;

import io.pier.service.ConsumerGroups;
import io.pier.service.Futures;
import io.pier.state.CommittedOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;

/**
 * OffsetCommit (v2-9), OffsetFetch (v1-9, batched from v8) and OffsetDelete: the committed offsets
 * of consumer groups, answered by {@link ConsumerGroups}. Topics are named (v10's topic ids are not
 * served yet). With {@code require_stable} a partition with an offset pending in a transaction
 * answers UNSTABLE_OFFSET_COMMIT, as in Kafka (the client retries until the transaction ends).
 */
public final class ConsumerOffsetHandlers {
    private static final long NO_OFFSET = -1;
    private static final int NO_LEADER_EPOCH = -1;
    private static final String NO_METADATA = "";
    /** OffsetFetch carries one group up to v7 and a list of groups from v8. */
    private static final short FIRST_BATCHED_FETCH_VERSION = 8;

    private final ConsumerGroups groups;

    private final Access access;

    public ConsumerOffsetHandlers(ConsumerGroups groups, Access access) {
        this.groups = groups;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> offsetCommit(ApiRequest request) {
        OffsetCommitRequestData in = request.bodyAs(OffsetCommitRequest.class).data();
        Map<TopicPartition, ConsumerGroups.Offset> offsets = new LinkedHashMap<>();
        // The group was checked in front of this handler; a topic without READ is not committed.
        List<TopicPartition> denied = new ArrayList<>();
        for (OffsetCommitRequestData.OffsetCommitRequestTopic t : in.topics()) {
            boolean mayRead = access.topic(request, AclOperation.READ, t.name());
            for (OffsetCommitRequestData.OffsetCommitRequestPartition p : t.partitions()) {
                if (!mayRead) {
                    denied.add(new TopicPartition(t.name(), p.partitionIndex()));
                    continue;
                }
                offsets.put(new TopicPartition(t.name(), p.partitionIndex()), new ConsumerGroups.Offset(
                        p.committedOffset(), p.committedLeaderEpoch(), p.committedMetadata()));
            }
        }
        ConsumerGroups.CommitRequest commit = new ConsumerGroups.CommitRequest(in.groupId(),
                in.generationIdOrMemberEpoch(), in.memberId() == null ? "" : in.memberId(), in.groupInstanceId(),
                request.version(), offsets);
        return groups.commit(commit).thenApply(committed -> {
            Map<TopicPartition, Errors> result = new LinkedHashMap<>(committed);
            denied.forEach(tp -> result.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED));
            OffsetCommitResponseData out = new OffsetCommitResponseData();
            Map<String, OffsetCommitResponseData.OffsetCommitResponseTopic> byTopic = new LinkedHashMap<>();
            result.forEach((tp, error) -> byTopic.computeIfAbsent(tp.topic(), name -> {
                OffsetCommitResponseData.OffsetCommitResponseTopic t =
                        new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(name);
                out.topics().add(t);
                return t;
            }).partitions().add(new OffsetCommitResponseData.OffsetCommitResponsePartition()
                    .setPartitionIndex(tp.partition()).setErrorCode(error.code())));
            return new OffsetCommitResponse(out);
        });
    }

    public CompletableFuture<AbstractResponse> offsetFetch(ApiRequest request) {
        OffsetFetchRequestData in = request.bodyAs(OffsetFetchRequest.class).data();
        short version = request.version();
        Predicate<String> mayDescribe = access.topics(request, AclOperation.DESCRIBE);
        if (version < FIRST_BATCHED_FETCH_VERSION) {
            List<TopicPartition> requested = null;
            if (in.topics() != null) {
                requested = new ArrayList<>();
                for (OffsetFetchRequestData.OffsetFetchRequestTopic t : in.topics()) {
                    for (int p : t.partitionIndexes()) {
                        requested.add(new TopicPartition(t.name(), p));
                    }
                }
            }
            return fetchGroup(in.groupId(), null, -1, requested, in.requireStable(), mayDescribe)
                    .thenApply(g -> singleGroupResponse(g, version));
        }
        List<CompletableFuture<OffsetFetchResponseGroup>> each = new ArrayList<>();
        for (OffsetFetchRequestData.OffsetFetchRequestGroup g : in.groups()) {
            List<TopicPartition> requested = null;
            if (g.topics() != null) {
                requested = new ArrayList<>();
                for (OffsetFetchRequestData.OffsetFetchRequestTopics t : g.topics()) {
                    for (int p : t.partitionIndexes()) {
                        requested.add(new TopicPartition(t.name(), p));
                    }
                }
            }
            // v9+: a consumer-protocol member names itself and its epoch.
            each.add(fetchGroup(g.groupId(), g.memberId(), g.memberEpoch(), requested, in.requireStable(),
                    mayDescribe));
        }
        return Futures.all(each).thenApply(list -> {
            OffsetFetchResponseData out = new OffsetFetchResponseData();
            out.groups().addAll(list);
            return new OffsetFetchResponse(out, version);
        });
    }

    /** One group's answer in the v8+ shape; every requested partition is listed, -1 when it has none. */
    private CompletableFuture<OffsetFetchResponseGroup> fetchGroup(String groupId, String memberId, int memberEpoch,
            List<TopicPartition> requested, boolean requireStable, Predicate<String> mayDescribe) {
        // Pending offsets are read before the committed ones: a commit marker publishes the committed
        // offsets first and drops the pending ones after, so either the partition is still pending
        // here or its committed offset is already there; read the other way round, a marker landing
        // in between would show neither.
        Set<TopicPartition> unstable = requireStable ? groups.unstablePartitions(groupId) : Set.of();
        return groups.fetch(groupId, memberId, memberEpoch, requested).thenApply(fetched -> {
            OffsetFetchResponseGroup g = new OffsetFetchResponseGroup().setGroupId(groupId)
                    .setErrorCode(fetched.error().code());
            if (fetched.error() != Errors.NONE) {
                return g;
            }
            Map<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> byTopic = new TreeMap<>();
            List<TopicPartition> listed = requested != null ? requested : new ArrayList<>(fetched.offsets().keySet());
            for (TopicPartition tp : listed) {
                if (!mayDescribe.test(tp.topic())) {
                    // All-topics fetches leave such topics out; a named one is answered as refused.
                    if (requested != null) {
                        byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                                .add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                        .setPartitionIndex(tp.partition()).setCommittedOffset(NO_OFFSET)
                                        .setCommittedLeaderEpoch(NO_LEADER_EPOCH).setMetadata(NO_METADATA)
                                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    }
                    continue;
                }
                boolean pending = unstable.contains(tp);
                CommittedOffset o = pending ? null : fetched.offsets().get(tp);
                byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                        .add(new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                                .setPartitionIndex(tp.partition())
                                .setCommittedOffset(o == null ? NO_OFFSET : o.offset())
                                .setCommittedLeaderEpoch(o == null ? NO_LEADER_EPOCH : o.leaderEpoch())
                                .setMetadata(o == null ? NO_METADATA : o.metadata())
                                .setErrorCode(pending ? Errors.UNSTABLE_OFFSET_COMMIT.code() : Errors.NONE.code()));
            }
            byTopic.forEach((topic, partitions) -> g.topics().add(
                    new OffsetFetchResponseData.OffsetFetchResponseTopics().setName(topic).setPartitions(partitions)));
            return g;
        });
    }

    /** v1-v7: one group; the group's error is top-level from v2, per partition in v1. */
    private static AbstractResponse singleGroupResponse(OffsetFetchResponseGroup g, short version) {
        OffsetFetchResponseData out = new OffsetFetchResponseData();
        if (version >= 2) {
            out.setErrorCode(g.errorCode());
        }
        for (OffsetFetchResponseData.OffsetFetchResponseTopics t : g.topics()) {
            OffsetFetchResponseData.OffsetFetchResponseTopic topic =
                    new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(t.name());
            for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                OffsetFetchResponseData.OffsetFetchResponsePartition partition =
                        new OffsetFetchResponseData.OffsetFetchResponsePartition()
                                .setPartitionIndex(p.partitionIndex())
                                .setCommittedOffset(p.committedOffset())
                                .setMetadata(p.metadata())
                                .setErrorCode(p.errorCode());
                if (version >= 5) {
                    partition.setCommittedLeaderEpoch(p.committedLeaderEpoch());
                }
                topic.partitions().add(partition);
            }
            out.topics().add(topic);
        }
        return new OffsetFetchResponse(out, version);
    }

    public CompletableFuture<AbstractResponse> offsetDelete(ApiRequest request) {
        OffsetDeleteRequestData in = request.bodyAs(OffsetDeleteRequest.class).data();
        List<TopicPartition> requested = new ArrayList<>();
        for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : in.topics()) {
            for (OffsetDeleteRequestData.OffsetDeleteRequestPartition p : t.partitions()) {
                requested.add(new TopicPartition(t.name(), p.partitionIndex()));
            }
        }
        return groups.deleteOffsets(in.groupId(), requested).thenApply(d -> {
            OffsetDeleteResponseData out = new OffsetDeleteResponseData().setErrorCode(d.error().code());
            d.partitions().forEach((tp, error) -> {
                OffsetDeleteResponseData.OffsetDeleteResponseTopic t = out.topics().find(tp.topic());
                if (t == null) {
                    t = new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(tp.topic());
                    out.topics().add(t);
                }
                t.partitions().add(new OffsetDeleteResponseData.OffsetDeleteResponsePartition()
                        .setPartitionIndex(tp.partition()).setErrorCode(error.code()));
            });
            return new OffsetDeleteResponse(out);
        });
    }
}
