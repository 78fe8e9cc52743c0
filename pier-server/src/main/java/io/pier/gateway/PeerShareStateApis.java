package io.pier.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.DeleteShareGroupStateResponseData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateResponseData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryResponseData;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateResponse;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryResponse;

import io.pier.protocol.ApiRequest;
import io.pier.protocol.Access;
import io.pier.protocol.ApiRouter;
import io.pier.service.Futures;
import io.pier.service.ShareOffsets;
import io.pier.service.ShareOffsets.StateSummary;
import io.pier.service.TopicService;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;

/**
 * What a gateway node answers the other nodes ({@link PeerShareState}) about the share state it
 * serves: ReadShareGroupStateSummary, InitializeShareGroupState and DeleteShareGroupState, as a
 * Kafka share coordinator answers its group coordinators. A share-partition whose state this node
 * does not serve is answered NOT_COORDINATOR. A ReadShareGroupStateSummary naming no topic asks
 * for every share-partition of the group served here (Pier's own use; Kafka never sends it).
 */
final class PeerShareStateApis {
    private final ShareOffsets offsets;
    private final TopicService topics;
    private final GatewayTopics upstreamTopics;
    private final BooleanSupplier settled;

    private PeerShareStateApis(ShareOffsets offsets, TopicService topics, GatewayTopics upstreamTopics,
            BooleanSupplier settled) {
        this.offsets = offsets;
        this.topics = topics;
        this.upstreamTopics = upstreamTopics;
        this.settled = settled;
    }

    /**
     * @param settled whether this node serves every state partition the split gave it: until
     *     then a question about all of a group's share-partitions is answered
     *     COORDINATOR_LOAD_IN_PROGRESS, not with the part taken over so far
     */
    static void register(ApiRouter router, ShareOffsets offsets, TopicService topics, GatewayTopics upstreamTopics,
            BooleanSupplier settled, Access access) {
        PeerShareStateApis apis = new PeerShareStateApis(offsets, topics, upstreamTopics, settled);
        // Inter-broker APIs, as on Kafka: CLUSTER_ACTION, which the nodes' peer principal must have.
        router.register(ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY, 0, 1,
                        access.requireCluster(AclOperation.CLUSTER_ACTION, apis::readSummary))
                .register(ApiKeys.INITIALIZE_SHARE_GROUP_STATE, 0, 0,
                        access.requireCluster(AclOperation.CLUSTER_ACTION, apis::initialize))
                .register(ApiKeys.DELETE_SHARE_GROUP_STATE, 0, 0,
                        access.requireCluster(AclOperation.CLUSTER_ACTION, apis::delete));
    }

    private CompletableFuture<AbstractResponse> readSummary(ApiRequest request) {
        ReadShareGroupStateSummaryRequestData in = request.bodyAs(ReadShareGroupStateSummaryRequest.class).data();
        List<SharePartitionKey> keys = new ArrayList<>();
        if (in.topics().isEmpty() && !settled.getAsBoolean()) {
            // no partition to mark: the error goes on a placeholder the asking node checks for
            return CompletableFuture.completedFuture(new ReadShareGroupStateSummaryResponse(
                    new ReadShareGroupStateSummaryResponseData().setResults(List.of(
                            new ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult()
                                    .setTopicId(Uuid.ZERO_UUID).setPartitions(List.of(
                                            new ReadShareGroupStateSummaryResponseData.PartitionResult()
                                                    .setPartition(-1)
                                                    .setErrorCode(Errors.COORDINATOR_LOAD_IN_PROGRESS.code())
                                                    .setErrorMessage("taking its share state over")))))));
        }
        if (in.topics().isEmpty()) {
            keys.addAll(offsets.stateKeysHere(in.groupId()));
        } else {
            in.topics().forEach(t -> t.partitions().forEach(p ->
                    keys.add(new SharePartitionKey(in.groupId(), t.topicId(), p.partition()))));
        }
        List<Uuid> ids = keys.stream().map(SharePartitionKey::topicId).distinct().toList();
        return upstreamTopics.ensureIds(ids).thenCompose(v -> {
            List<CompletableFuture<ReadShareGroupStateSummaryResponseData.PartitionResult>> read = new ArrayList<>();
            for (SharePartitionKey key : keys) {
                read.add(summary(key).handle((s, failure) -> {
                    ReadShareGroupStateSummaryResponseData.PartitionResult p =
                            new ReadShareGroupStateSummaryResponseData.PartitionResult().setPartition(key.partition());
                    Errors error = failure != null ? Errors.forException(Futures.unwrap(failure))
                            : s == null ? Errors.NOT_COORDINATOR : Errors.NONE;
                    if (error != Errors.NONE) {
                        return p.setErrorCode(error.code()).setErrorMessage(error.message());
                    }
                    return p.setStartOffset(s.startOffset()).setDeliveryCompleteCount((int) s.deliveryCompleteCount())
                            .setLeaderEpoch(0).setStateEpoch(0);
                }));
            }
            return Futures.all(read).thenApply(results -> {
                Map<Uuid, ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult> byTopic = new LinkedHashMap<>();
                for (int i = 0; i < keys.size(); i++) {
                    byTopic.computeIfAbsent(keys.get(i).topicId(), id ->
                            new ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult().setTopicId(id))
                            .partitions().add(results.get(i));
                }
                return new ReadShareGroupStateSummaryResponse(new ReadShareGroupStateSummaryResponseData()
                        .setResults(new ArrayList<>(byTopic.values())));
            });
        });
    }

    /** The summary of a share-partition served here; null if it is not. */
    private CompletableFuture<StateSummary> summary(SharePartitionKey key) {
        TopicMetadata topic = topics.topic(key.topicId());
        if (!offsets.servesHere(key)) {
            return CompletableFuture.completedFuture(null);
        }
        return topic == null ? CompletableFuture.completedFuture(new StateSummary(key, -1, 0))
                : offsets.stateSummaryHere(new TopicPartition(topic.name(), key.partition()), key);
    }

    private CompletableFuture<AbstractResponse> initialize(ApiRequest request) {
        InitializeShareGroupStateRequestData in = request.bodyAs(InitializeShareGroupStateRequest.class).data();
        InitializeShareGroupStateResponseData out = new InitializeShareGroupStateResponseData();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (InitializeShareGroupStateRequestData.InitializeStateData t : in.topics()) {
            InitializeShareGroupStateResponseData.InitializeStateResult result =
                    new InitializeShareGroupStateResponseData.InitializeStateResult().setTopicId(t.topicId());
            out.results().add(result);
            for (InitializeShareGroupStateRequestData.PartitionData p : t.partitions()) {
                InitializeShareGroupStateResponseData.PartitionResult r =
                        new InitializeShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
                result.partitions().add(r);
                done.add(changed(new SharePartitionKey(in.groupId(), t.topicId(), p.partition()),
                        key -> offsets.reset(key, p.startOffset()),
                        (code, message) -> r.setErrorCode(code).setErrorMessage(message)));
            }
        }
        return CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
                .thenApply(v -> new InitializeShareGroupStateResponse(out));
    }

    private CompletableFuture<AbstractResponse> delete(ApiRequest request) {
        DeleteShareGroupStateRequestData in = request.bodyAs(DeleteShareGroupStateRequest.class).data();
        DeleteShareGroupStateResponseData out = new DeleteShareGroupStateResponseData();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (DeleteShareGroupStateRequestData.DeleteStateData t : in.topics()) {
            DeleteShareGroupStateResponseData.DeleteStateResult result =
                    new DeleteShareGroupStateResponseData.DeleteStateResult().setTopicId(t.topicId());
            out.results().add(result);
            for (DeleteShareGroupStateRequestData.PartitionData p : t.partitions()) {
                DeleteShareGroupStateResponseData.PartitionResult r =
                        new DeleteShareGroupStateResponseData.PartitionResult().setPartition(p.partition());
                result.partitions().add(r);
                done.add(changed(new SharePartitionKey(in.groupId(), t.topicId(), p.partition()),
                        offsets::deleteState, (code, message) -> r.setErrorCode(code).setErrorMessage(message)));
            }
        }
        return CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
                .thenApply(v -> new DeleteShareGroupStateResponse(out));
    }

    /**
     * Applies {@code change} to a share-partition served here, then notes its outcome; one served
     * elsewhere is NOT_COORDINATOR (not passed on: the asking node looks the owner up again).
     */
    private CompletableFuture<Void> changed(SharePartitionKey key,
            Function<SharePartitionKey, CompletableFuture<Void>> change, BiConsumer<Short, String> outcome) {
        if (!offsets.servesHere(key)) {
            outcome.accept(Errors.NOT_COORDINATOR.code(), Errors.NOT_COORDINATOR.message());
            return CompletableFuture.completedFuture(null);
        }
        return change.apply(key).handle((v, failure) -> {
            Errors error = failure == null ? Errors.NONE : Errors.forException(Futures.unwrap(failure));
            outcome.accept(error.code(), error == Errors.NONE ? null : error.message());
            return null;
        });
    }
}
