package io.pier.gateway;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import io.pier.protocol.ApiRequest;
import io.pier.service.ClientConnection;

/**
 * Forwards requests addressed to partitions (Produce, Fetch, ListOffsets, DeleteRecords,
 * OffsetForLeaderEpoch, DescribeProducers) to the upstream leader of each partition. A request
 * whose partitions share one leader goes there unchanged; otherwise it is cut into one request per
 * leader and the answers are joined into one. A partition whose leader the gateway does not know
 * yet goes to any upstream broker, which answers it or says where it is
 * (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION), while the metadata is read again.
 */
final class PartitionForwarding {
    /** A partition as a request names it: by topic name, or from Fetch v13 and Produce v13 by topic id. */
    record PartitionRef(String name, Uuid id, int partition) {}

    /**
     * What forwarding needs to know of one API's data: its partitions, how to keep only some of
     * them in a copy, how to join answers, and what to change in an answer before a client sees it.
     */
    interface Shape<Q extends ApiMessage, R extends ApiMessage> {
        List<PartitionRef> partitions(Q request);

        /** Removes from {@code copy} every partition {@code keep} refuses (and topics left empty). */
        void retain(Q copy, Predicate<PartitionRef> keep);

        /** Adds the answers of {@code part} to {@code into}. */
        void join(R into, R part);

        /** Changes an upstream answer for a client of the gateway (addresses, sessions). */
        default void rewrite(R answer) { }

        /** True for a request the upstream may hold until data comes (Fetch): it goes over a lane of its own. */
        default boolean longPolls() {
            return false;
        }

        /** The request to send upstream in place of the client's (Fetch: without a session). */
        default Q outgoing(Q request) {
            return request;
        }
    }

    private final Upstream upstream;
    /** Per client connection: the moment its last ordered request was handed to the upstream client. */
    private final Map<ClientConnection, CompletableFuture<Void>> lastHandedOver =
            new java.util.concurrent.ConcurrentHashMap<>();

    PartitionForwarding(Upstream upstream) {
        this.upstream = upstream;
    }

    /**
     * Forwards {@code request} once the client's request before it has been handed to the
     * upstream client, when {@code ordered}: Produce, whose batches of one partition must reach the
     * partition's leader in the order the client sent them (an idempotent producer's sequence
     * numbers), even when one request waits for metadata and the next would not. Requests to one
     * upstream node leave on one connection, in the order they are handed over.
     */
    <Q extends ApiMessage, R extends ApiMessage> CompletableFuture<AbstractResponse> forward(ApiRequest request,
            Shape<Q, R> shape, int timeoutMs, boolean ordered) {
        if (!ordered || request.connection() == null) {
            return forward(request, shape, timeoutMs, false, null);
        }
        CompletableFuture<Void> handedOver = new CompletableFuture<>();
        CompletableFuture<Void> before = lastHandedOver.put(request.connection(), handedOver);
        if (before == null) {
            request.connection().onClose(() -> lastHandedOver.remove(request.connection()));
            before = CompletableFuture.completedFuture(null);
        }
        // whenComplete: a request that failed before it was handed over must not hold up the next ones.
        return before.thenCompose(v -> forward(request, shape, timeoutMs, false, handedOver))
                .whenComplete((answer, failure) -> handedOver.complete(null));
    }

    @SuppressWarnings("unchecked")
    private <Q extends ApiMessage, R extends ApiMessage> CompletableFuture<AbstractResponse> forward(
            ApiRequest request, Shape<Q, R> shape, int timeoutMs, boolean refreshed,
            CompletableFuture<Void> handedOver) {
        AbstractRequest body = request.body();
        Q data = (Q) body.data();
        UpstreamView view = upstream.view();
        Map<PartitionRef, Node> route = new HashMap<>();
        boolean unknown = false;
        for (PartitionRef ref : shape.partitions(data)) {
            Node leader = leader(view, ref);
            route.put(ref, leader);
            unknown |= leader == null;
        }
        if (unknown && !refreshed) {
            // A topic created a moment ago, or a leader that moved: read the metadata once more.
            return upstream.refresh().handle((v, failure) -> null)
                    .thenCompose(ignored -> forward(request, shape, timeoutMs, true, handedOver));
        }
        if (unknown) {
            // Still unknown: any broker answers these partitions, or tells the client where they are.
            Node any = upstream.anyBroker();
            route.replaceAll((ref, node) -> node == null ? any : node);
        }
        Map<Node, List<PartitionRef>> byNode = new LinkedHashMap<>();
        route.forEach((ref, node) -> byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(ref));
        if (byNode.isEmpty()) {
            // No partitions (a consumer closing its fetch session sends such a Fetch): any broker
            // answers it, at once, as the client expects.
            byNode.put(upstream.anyBroker(), List.of());
        }
        String clientId = request.header().clientId();
        short version = request.version();
        Q outgoing = shape.outgoing(data);
        List<CompletableFuture<AbstractResponse>> parts = new ArrayList<>();
        int lane = shape.longPolls() && request.connection() != null
                ? 1 + Math.floorMod(request.connection().id().hashCode(), Upstream.FETCH_LANES) : 0;
        if (byNode.size() == 1 && byNode.keySet().iterator().next() != null) {
            Node node = Upstream.lane(byNode.keySet().iterator().next(), lane);
            AbstractRequest send = outgoing == data ? body : Messages.request(body.apiKey(), outgoing, version);
            parts.add(sendTo(node, send, clientId, timeoutMs));
        } else {
            for (Map.Entry<Node, List<PartitionRef>> e : byNode.entrySet()) {
                Q copy = (Q) outgoing.duplicate();
                Node node = e.getKey();
                shape.retain(copy, ref -> Objects.equals(route.get(ref), node));
                parts.add(sendTo(Upstream.lane(node, lane), Messages.request(body.apiKey(), copy, version), clientId,
                        timeoutMs));
            }
        }
        if (handedOver != null) {
            handedOver.complete(null); // every part is queued on the upstream client, in order
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<AbstractResponse> answers = new ArrayList<>();
            for (CompletableFuture<AbstractResponse> p : parts) {
                AbstractResponse answer = p.join();
                if (answer != null) {
                    answers.add(answer);
                }
            }
            if (answers.isEmpty()) {
                return null; // Produce with acks=0: no answer for the client either
            }
            return join(body, shape, answers, version);
        });
    }

    @SuppressWarnings("unchecked")
    private <Q extends ApiMessage, R extends ApiMessage> AbstractResponse join(AbstractRequest body,
            Shape<Q, R> shape, List<AbstractResponse> answers, short version) {
        for (AbstractResponse a : answers) {
            if (a.errorCounts().containsKey(Errors.NOT_LEADER_OR_FOLLOWER)
                    || a.errorCounts().containsKey(Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    || a.errorCounts().containsKey(Errors.UNKNOWN_TOPIC_ID)) {
                var unused = upstream.refresh(); // the client retries; the next routing sees the new leader
                break;
            }
        }
        // The gateway's own changes go into each answer before they are joined.
        answers.forEach(a -> shape.rewrite((R) a.data()));
        return Messages.joined(body.apiKey(), version, answers, shape::join);
    }

    /** Sends a part; an upstream that cannot be reached answers with the matching error code. */
    private CompletableFuture<AbstractResponse> sendTo(Node node, AbstractRequest part, String clientId, int timeoutMs) {
        return upstream.send(node, part, clientId, timeoutMs)
                .exceptionally(failure -> part.getErrorResponse(0, Forwarding.unwrap(failure)));
    }

    private static Node leader(UpstreamView view, PartitionRef ref) {
        String name = ref.name() != null && !ref.name().isEmpty() ? ref.name() : view.name(ref.id());
        return name == null ? null : view.leader(new TopicPartition(name, ref.partition()));
    }
}
