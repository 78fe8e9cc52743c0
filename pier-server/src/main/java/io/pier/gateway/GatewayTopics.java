package io.pier.gateway;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Uuid;

import io.pier.service.TopicService;

/**
 * The upstream topics a gateway's share groups subscribe to, copied into its own topic metadata
 * (name, the upstream's topic id, partition count) before the share-group coordinator reads it,
 * so its assignments and the share requests that follow name the upstream's partitions.
 */
final class GatewayTopics {
    private final Upstream upstream;
    private final TopicService topics;

    GatewayTopics(Upstream upstream, TopicService topics) {
        this.upstream = upstream;
        this.topics = topics;
    }

    /**
     * Mirrors the named topics the upstream has; a name it does not know is left out, and the
     * share group then sees no such topic, as on a broker without it.
     */
    CompletableFuture<Void> ensure(Collection<String> names) {
        if (names == null || names.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        boolean unknown = names.stream().anyMatch(n -> !upstream.view().topics().containsKey(n));
        CompletableFuture<UpstreamView> view = unknown
                ? upstream.refresh().exceptionally(t -> upstream.view())
                : CompletableFuture.completedFuture(upstream.view());
        return view.thenCompose(v -> {
            List<CompletableFuture<?>> mirroring = new ArrayList<>();
            for (String name : names) {
                UpstreamView.Topic t = v.topics().get(name);
                if (t != null && t.partitions() > 0) {
                    mirroring.add(topics.mirror(name, t.id(), t.partitions()));
                }
            }
            return CompletableFuture.allOf(mirroring.toArray(CompletableFuture[]::new));
        });
    }

    /**
     * Mirrors the topics a share request names by id that this node does not know yet: the leader
     * of a partition is often not the group's coordinator, which mirrored them at the heartbeat.
     */
    CompletableFuture<Void> ensureIds(Collection<Uuid> ids) {
        List<Uuid> missing = new ArrayList<>();
        for (Uuid id : ids) {
            if (topics.topic(id) == null) {
                missing.add(id);
            }
        }
        if (missing.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        boolean unknown = missing.stream().anyMatch(id -> upstream.view().name(id) == null);
        CompletableFuture<UpstreamView> view = unknown
                ? upstream.refresh().exceptionally(t -> upstream.view())
                : CompletableFuture.completedFuture(upstream.view());
        return view.thenCompose(v -> {
            List<String> names = new ArrayList<>();
            missing.forEach(id -> {
                String name = v.name(id);
                if (name != null) {
                    names.add(name);
                }
            });
            return ensure(names);
        });
    }
}
