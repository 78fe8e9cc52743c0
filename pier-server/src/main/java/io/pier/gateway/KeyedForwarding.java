package io.pier.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import io.pier.protocol.ApiRequest;

/**
 * Forwards requests addressed to a group or a transactional id to its upstream coordinator. The
 * gateway names itself as every coordinator (FindCoordinator), so a client's batched request
 * (DescribeGroups, DeleteGroups, OffsetFetch v8+, ConsumerGroupDescribe, DescribeTransactions) may
 * hold keys of several upstream coordinators: it is cut by coordinator and the answers joined, as
 * {@link PartitionForwarding} does by leader. When an answer says the coordinator moved or is not
 * ready, the gateway forgets it and the client, told the same error, asks again.
 */
final class KeyedForwarding {
    /** Where one batched API keeps its keys, and how its answers are joined. */
    interface Shape<Q extends ApiMessage, R extends ApiMessage> {
        List<String> keys(Q request);

        void retain(Q copy, Predicate<String> keep);

        void join(R into, R part);
    }

    private final Upstream upstream;

    KeyedForwarding(Upstream upstream) {
        this.upstream = upstream;
    }

    /** Forwards a request with one key to that key's coordinator. */
    CompletableFuture<AbstractResponse> forward(ApiRequest request, byte type, String key, int timeoutMs) {
        AbstractRequest body = request.body();
        return upstream.coordinator(type, key)
                .thenCompose(node -> upstream.send(node, body, request.header().clientId(), timeoutMs))
                .handle((answer, failure) -> {
                    if (failure != null) {
                        Throwable cause = Forwarding.unwrap(failure);
                        forgetIfMoved(type, key, Errors.forException(cause));
                        return body.getErrorResponse(0, cause);
                    }
                    answer.errorCounts().keySet().forEach(e -> forgetIfMoved(type, key, e));
                    return answer;
                });
    }

    CompletableFuture<AbstractResponse> forward(ApiRequest request, byte type, String key) {
        return forward(request, type, key, upstream.requestTimeoutMs());
    }

    /** Forwards a batched request, cut by the coordinator of each key. */
    @SuppressWarnings("unchecked")
    <Q extends ApiMessage, R extends ApiMessage> CompletableFuture<AbstractResponse> forwardBatch(ApiRequest request,
            byte type, Shape<Q, R> shape) {
        AbstractRequest body = request.body();
        Q data = (Q) body.data();
        List<String> keys = shape.keys(data);
        if (keys.size() == 1) {
            return forward(request, type, keys.get(0));
        }
        // Each key's coordinator, or the failure of its lookup (then that key is answered with it).
        Map<String, CompletableFuture<Object>> lookups = new LinkedHashMap<>();
        keys.forEach(k -> lookups.put(k, upstream.coordinator(type, k)
                .handle((node, failure) -> failure == null ? node : Forwarding.unwrap(failure))));
        return CompletableFuture.allOf(lookups.values().toArray(CompletableFuture[]::new)).thenCompose(done -> {
            Map<Object, List<String>> groups = new LinkedHashMap<>();
            lookups.forEach((k, f) -> {
                Object where = f.join();
                groups.computeIfAbsent(where instanceof Node ? where : k, g -> new ArrayList<>()).add(k);
            });
            List<CompletableFuture<AbstractResponse>> parts = new ArrayList<>();
            for (Map.Entry<Object, List<String>> g : groups.entrySet()) {
                Q copy = (Q) data.duplicate();
                List<String> mine = g.getValue();
                shape.retain(copy, mine::contains);
                AbstractRequest part = Messages.request(body.apiKey(), copy, request.version());
                if (g.getKey() instanceof Node node) {
                    parts.add(upstream.send(node, part, request.header().clientId()).handle((a, f) -> {
                        if (f != null) {
                            return part.getErrorResponse(0, Forwarding.unwrap(f));
                        }
                        a.errorCounts().keySet().forEach(e -> mine.forEach(k -> forgetIfMoved(type, k, e)));
                        return a;
                    }));
                } else {
                    Throwable cause = (Throwable) lookups.get(mine.get(0)).join();
                    parts.add(CompletableFuture.completedFuture(part.getErrorResponse(0, cause)));
                }
            }
            return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(all ->
                    Messages.joined(body.apiKey(), request.version(), Messages.answers(parts), shape::join));
        });
    }

    private void forgetIfMoved(byte type, String key, Errors error) {
        if (error == Errors.NOT_COORDINATOR || error == Errors.COORDINATOR_NOT_AVAILABLE) {
            upstream.forgetCoordinator(type, key);
        }
    }
}
