package io.pier.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateResponse;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryResponse;

import io.pier.service.Futures;
import io.pier.service.ShareOffsets.StateSummary;
import io.pier.service.ShareStateElsewhere;
import io.pier.state.SharePartitionKey;

/**
 * The share state the other gateway nodes serve, asked for with Kafka's own broker-to-broker
 * share-state APIs (ReadShareGroupStateSummary, InitializeShareGroupState,
 * DeleteShareGroupState), as Kafka's group coordinator asks its share coordinators; the other
 * nodes answer with {@link PeerShareStateApis}. It is what lets a group's coordinator answer Admin
 * for share-partitions whose state another node serves.
 *
 * <p>A node that does not answer, or no longer serves the state (the split moved it), is
 * reported as COORDINATOR_LOAD_IN_PROGRESS, which Admin retries: the state is on its way to a
 * node that will answer.
 */
final class PeerShareState implements ShareStateElsewhere {
    private final UpstreamClient peers;
    private final GatewayCluster cluster;

    PeerShareState(UpstreamClient peers, GatewayCluster cluster) {
        this.peers = peers;
        this.cluster = cluster;
    }

    /**
     * Asks every other node, with a ReadShareGroupStateSummary naming no topic: Pier's nodes
     * answer that with every share-partition of the group whose state they serve (Kafka's
     * brokers are never asked so; there the group coordinator keeps the list itself).
     */
    @Override
    public CompletableFuture<List<StateSummary>> groupStates(String groupId) {
        List<CompletableFuture<List<StateSummary>>> asked = new ArrayList<>();
        for (Node node : cluster.peers()) {
            ReadShareGroupStateSummaryRequestData all = new ReadShareGroupStateSummaryRequestData().setGroupId(groupId);
            asked.add(send(node, new ReadShareGroupStateSummaryRequest.Builder(all), "the share state of group " + groupId)
                    .thenApply(answer -> summaries(groupId, (ReadShareGroupStateSummaryResponse) answer)));
        }
        return Futures.all(asked).thenCompose(lists -> {
            List<StateSummary> out = new ArrayList<>();
            lists.forEach(out::addAll);
            // The asking node names these topics to Admin: it must know them, which it may not yet.
            List<Uuid> ids = out.stream().map(s -> s.key().topicId()).distinct().toList();
            return cluster.topics().ensureIds(ids).thenApply(v -> out);
        });
    }

    /** The summaries a node sent; fails if it could not answer for all (still taking its state over). */
    private static List<StateSummary> summaries(String groupId, ReadShareGroupStateSummaryResponse answer) {
        List<StateSummary> out = new ArrayList<>();
        for (ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult t : answer.data().results()) {
            for (ReadShareGroupStateSummaryResponseData.PartitionResult p : t.partitions()) {
                SharePartitionKey key = p.partition() < 0 ? null : new SharePartitionKey(groupId, t.topicId(), p.partition());
                check(key, Errors.forCode(p.errorCode()), p.errorMessage());
                out.add(new StateSummary(key, p.startOffset(), p.deliveryCompleteCount()));
            }
        }
        return out;
    }

    @Override
    public CompletableFuture<StateSummary> summary(SharePartitionKey key) {
        ReadShareGroupStateSummaryRequestData data = new ReadShareGroupStateSummaryRequestData()
                .setGroupId(key.groupId())
                .setTopics(List.of(new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData()
                        .setTopicId(key.topicId())
                        .setPartitions(List.of(new ReadShareGroupStateSummaryRequestData.PartitionData()
                                .setPartition(key.partition())))));
        return toServing(key, new ReadShareGroupStateSummaryRequest.Builder(data), answer -> {
            for (ReadShareGroupStateSummaryResponseData.ReadStateSummaryResult t
                    : ((ReadShareGroupStateSummaryResponse) answer).data().results()) {
                for (ReadShareGroupStateSummaryResponseData.PartitionResult p : t.partitions()) {
                    if (t.topicId().equals(key.topicId()) && p.partition() == key.partition()) {
                        check(key, Errors.forCode(p.errorCode()), p.errorMessage());
                        return new StateSummary(key, p.startOffset(), p.deliveryCompleteCount());
                    }
                }
            }
            throw new CoordinatorLoadInProgressException("no answer for " + key + " from the node serving it");
        });
    }

    @Override
    public CompletableFuture<Void> reset(SharePartitionKey key, long startOffset) {
        InitializeShareGroupStateRequestData data = new InitializeShareGroupStateRequestData()
                .setGroupId(key.groupId())
                .setTopics(List.of(new InitializeShareGroupStateRequestData.InitializeStateData()
                        .setTopicId(key.topicId())
                        .setPartitions(List.of(new InitializeShareGroupStateRequestData.PartitionData()
                                .setPartition(key.partition()).setStartOffset(startOffset)))));
        return toServing(key, new InitializeShareGroupStateRequest.Builder(data), answer -> {
            ((InitializeShareGroupStateResponse) answer).data().results().forEach(t -> t.partitions()
                    .forEach(p -> check(key, Errors.forCode(p.errorCode()), p.errorMessage())));
            return null;
        });
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        DeleteShareGroupStateRequestData data = new DeleteShareGroupStateRequestData()
                .setGroupId(key.groupId())
                .setTopics(List.of(new DeleteShareGroupStateRequestData.DeleteStateData()
                        .setTopicId(key.topicId())
                        .setPartitions(List.of(new DeleteShareGroupStateRequestData.PartitionData()
                                .setPartition(key.partition())))));
        return toServing(key, new DeleteShareGroupStateRequest.Builder(data), answer -> {
            ((DeleteShareGroupStateResponse) answer).data().results().forEach(t -> t.partitions()
                    .forEach(p -> check(key, Errors.forCode(p.errorCode()), p.errorMessage())));
            return null;
        });
    }

    private <T> CompletableFuture<T> toServing(SharePartitionKey key, AbstractRequest.Builder<?> request,
            Function<AbstractResponse, T> read) {
        Node node = cluster.peerServing(key);
        if (node == null) {
            return CompletableFuture.failedFuture(new CoordinatorLoadInProgressException(
                    "the share state of " + key + " is moving between gateway nodes"));
        }
        return send(node, request, "the share state of " + key).thenApply(read);
    }

    /** A node that no longer serves the state says NOT_COORDINATOR: the state is moving, retriable. */
    private static void check(SharePartitionKey key, Errors error, String message) {
        if (error == Errors.NOT_COORDINATOR) {
            throw new CoordinatorLoadInProgressException("the share state of " + key + " is moving between gateway nodes");
        }
        if (error == Errors.COORDINATOR_LOAD_IN_PROGRESS) {
            throw new CoordinatorLoadInProgressException("a gateway node is taking its share state over");
        }
        if (error != Errors.NONE) {
            throw error.exception(message);
        }
    }

    private CompletableFuture<AbstractResponse> send(Node node, AbstractRequest.Builder<?> request, String what) {
        return peers.send(node, request).handle((response, failure) -> {
            if (failure != null) {
                throw new CompletionException(new CoordinatorLoadInProgressException("gateway node " + node.id()
                        + " did not answer for " + what + ": " + Futures.unwrap(failure), failure));
            }
            return response;
        });
    }
}
