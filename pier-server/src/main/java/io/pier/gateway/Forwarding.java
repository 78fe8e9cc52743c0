package io.pier.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;

import io.pier.protocol.ApiRequest;
import io.pier.service.NodeInfo;

/**
 * The gateway's own answers around forwarding: Metadata (the upstream's topics, with the gateway
 * nodes as their brokers and leaders), requests any upstream broker can answer, and requests each
 * upstream broker answers for its own part (ListGroups, ListTransactions).
 */
final class Forwarding {
    private final Upstream upstream;
    private final GatewayNodes nodes;

    Forwarding(Upstream upstream, GatewayNodes nodes) {
        this.upstream = upstream;
        this.nodes = nodes;
    }

    /** The failure a future completed with, without the wrappers the futures add. */
    static Throwable unwrap(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Forwards to any upstream broker; a failure to reach it is answered with its error code. */
    CompletableFuture<AbstractResponse> toAny(ApiRequest request) {
        AbstractRequest body = request.body();
        return upstream.send(upstream.anyBroker(), body, request.header().clientId())
                .exceptionally(failure -> body.getErrorResponse(0, unwrap(failure)));
    }

    /**
     * Metadata: the upstream's answer with the gateway nodes in place of the upstream brokers,
     * each partition led by the gateway node that serves it. Clients then send everything to the
     * gateway; the leader epochs stay the upstream's, so the epochs clients put in their Fetch
     * requests still mean what the upstream expects.
     */
    CompletableFuture<AbstractResponse> metadata(ApiRequest request) {
        MetadataRequest body = request.bodyAs(MetadataRequest.class);
        if (nodes.withdrawn()) {
            // Cut off from the upstream: an answer without brokers at once, which clients take as
            // a failed update and ask another node, rather than one after their request timeout.
            return CompletableFuture.completedFuture(body.getErrorResponse(0,
                    new LeaderNotAvailableException("this gateway node has no answer from the upstream cluster")));
        }
        boolean allTopics = body.isAllTopics();
        return upstream.send(upstream.anyBroker(), body, request.header().clientId()).handle((answer, failure) -> {
            if (failure != null) {
                return body.getErrorResponse(0, unwrap(failure));
            }
            MetadataResponse response = (MetadataResponse) answer;
            upstream.learn(response, allTopics);
            rewrite(response.data(), request);
            return response;
        });
    }

    private void rewrite(MetadataResponseData data, ApiRequest request) {
        List<NodeInfo> gateway = nodes.all(request.connection());
        data.brokers().clear();
        for (NodeInfo n : gateway) {
            data.brokers().add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(n.nodeId()).setHost(n.host()).setPort(n.port()));
        }
        data.setControllerId(nodes.controller());
        UpstreamView view = upstream.view();
        for (MetadataResponseData.MetadataResponseTopic topic : data.topics()) {
            Uuid id = topic.topicId() != null && !Uuid.ZERO_UUID.equals(topic.topicId()) ? topic.topicId()
                    : view.id(topic.name()); // Metadata before v10 names no topic ids
            for (MetadataResponseData.MetadataResponsePartition p : topic.partitions()) {
                if (p.leaderId() < 0) {
                    continue; // no leader upstream: none here either, and the client waits as it would
                }
                int owner = nodes.owner(id, p.partitionIndex());
                if (owner < 0) {
                    // No gateway node serves it yet (this node has not joined the split, or the
                    // partition is on its way from one node to another): no leader, as Kafka says
                    // during an election; the client asks again. Naming this node would send share
                    // acknowledgements here while another node still serves the partition.
                    p.setLeaderId(-1).setErrorCode(Errors.LEADER_NOT_AVAILABLE.code())
                            .setReplicaNodes(new ArrayList<>()).setIsrNodes(new ArrayList<>())
                            .setOfflineReplicas(new ArrayList<>()); // no upstream broker id shows through
                    continue;
                }
                p.setLeaderId(owner).setReplicaNodes(new ArrayList<>(List.of(owner)))
                        .setIsrNodes(new ArrayList<>(List.of(owner))).setOfflineReplicas(new ArrayList<>());
            }
        }
    }

    /** ListGroups: every upstream broker lists the groups it coordinates; the lists are joined. */
    CompletableFuture<AbstractResponse> listGroups(ApiRequest request) {
        return toEachBroker(request, ListGroupsResponseData::new,
                (ListGroupsResponseData into, ListGroupsResponseData part) -> {
            into.groups().addAll(part.groups());
            if (into.errorCode() == Errors.NONE.code()) {
                into.setErrorCode(part.errorCode());
            }
        });
    }

    /** ListTransactions: as ListGroups, for the transactional ids each broker coordinates. */
    CompletableFuture<AbstractResponse> listTransactions(ApiRequest request) {
        return toEachBroker(request, ListTransactionsResponseData::new,
                (ListTransactionsResponseData into, ListTransactionsResponseData part) -> {
            into.transactionStates().addAll(part.transactionStates());
            if (into.errorCode() == Errors.NONE.code()) {
                into.setErrorCode(part.errorCode());
            }
        });
    }

    @SuppressWarnings("unchecked")
    private <R extends ApiMessage> CompletableFuture<AbstractResponse> toEachBroker(ApiRequest request,
            Supplier<R> empty, BiConsumer<R, R> join) {
        AbstractRequest body = request.body();
        List<CompletableFuture<AbstractResponse>> parts = new ArrayList<>();
        for (Node broker : nodes.upstreamShare(upstream.allBrokers())) {
            parts.add(upstream.send(broker, body, request.header().clientId())
                    .exceptionally(failure -> body.getErrorResponse(0, unwrap(failure))));
        }
        if (parts.isEmpty()) {
            return CompletableFuture.completedFuture(Messages.response(body.apiKey(), empty.get(), request.version()));
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(done ->
                Messages.joined(body.apiKey(), request.version(), Messages.answers(parts), join));
    }

}
