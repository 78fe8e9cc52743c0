package io.pier.protocol;

import io.pier.security.acl.AclAuthorizer;
import io.pier.security.acl.Authorizer;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The authorizer as handlers use it: one check per resource kind for the request's principal and
 * host, whole-request refusals built from the request's own error response, and wrappers that put
 * a group or cluster check in front of a handler. With authorization off every check passes.
 */
public final class Access {
    public static final Access ALLOW_ALL = new Access(Authorizer.ALLOW_ALL);

    /** The schema default of every authorized-operations field: the client did not ask. */
    public static final int OPERATIONS_OMITTED = Integer.MIN_VALUE;

    /** Kafka's operations per resource type, the bits an authorized-operations field may carry. */
    private static final Map<ResourceType, Set<AclOperation>> SUPPORTED = Map.of(
            ResourceType.TOPIC, EnumSet.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                    AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                    AclOperation.ALTER_CONFIGS),
            ResourceType.GROUP, EnumSet.of(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                    AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
            ResourceType.CLUSTER, EnumSet.of(AclOperation.CREATE, AclOperation.CLUSTER_ACTION,
                    AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
                    AclOperation.ALTER, AclOperation.DESCRIBE));

    private final Authorizer authorizer;

    public Access(Authorizer authorizer) {
        this.authorizer = authorizer;
    }

    /** False with authorization off, where responses keep their pre-ACL shape (e.g. no authorized operations). */
    public boolean enabled() {
        return authorizer != Authorizer.ALLOW_ALL;
    }

    public boolean on(ApiRequest request, AclOperation op, ResourceType type, String name) {
        if (authorizer == Authorizer.ALLOW_ALL) {
            return true;
        }
        return authorizer.authorize(request.principal(), host(request), op, type, name);
    }

    public boolean topic(ApiRequest request, AclOperation op, String topic) {
        return on(request, op, ResourceType.TOPIC, topic);
    }

    public boolean group(ApiRequest request, AclOperation op, String group) {
        return on(request, op, ResourceType.GROUP, group);
    }

    public boolean cluster(ApiRequest request, AclOperation op) {
        return on(request, op, ResourceType.CLUSTER, AclAuthorizer.CLUSTER_NAME);
    }

    public boolean transactionalId(ApiRequest request, AclOperation op, String id) {
        return on(request, op, ResourceType.TRANSACTIONAL_ID, id);
    }

    /**
     * The operations the principal may perform on the resource, one bit per operation code, as
     * Kafka answers {@code include*AuthorizedOperations}: with authorization off, every operation
     * the resource type supports.
     */
    public int operations(ApiRequest request, ResourceType type, String name) {
        int bits = 0;
        for (AclOperation op : SUPPORTED.get(type)) {
            if (on(request, op, type, name)) {
                bits |= 1 << op.code();
            }
        }
        return bits;
    }

    /** The cluster's authorized operations; none at all without DESCRIBE on the cluster, as Kafka. */
    public int clusterOperations(ApiRequest request) {
        return cluster(request, AclOperation.DESCRIBE)
                ? operations(request, ResourceType.CLUSTER, AclAuthorizer.CLUSTER_NAME) : 0;
    }

    /** Whether every one of the topics (a group's subscriptions and assignments) allows DESCRIBE. */
    public boolean mayDescribeAll(ApiRequest request, Stream<String> topics) {
        return topics.allMatch(t -> topic(request, AclOperation.DESCRIBE, t));
    }

    /** Topics the principal may use for {@code op}, as a filter over topic names. */
    public Predicate<String> topics(ApiRequest request, AclOperation op) {
        return name -> topic(request, op, name);
    }

    /** Kafka's rule for creating a topic: CREATE on the cluster, or on the topic itself. */
    public boolean mayCreateTopic(ApiRequest request, String topic) {
        return cluster(request, AclOperation.CREATE) || topic(request, AclOperation.CREATE, topic);
    }

    /** The whole request refused with {@code error}, in the response shape of its API and version. */
    public static CompletableFuture<AbstractResponse> refuse(ApiRequest request, Errors error) {
        return CompletableFuture.completedFuture(request.body().getErrorResponse(0, error.exception()));
    }

    /** Runs {@code next} only if the request's group (given by {@code groupId}) allows {@code op}. */
    public ApiHandler requireGroup(AclOperation op, Function<ApiRequest, String> groupId, ApiHandler next) {
        return request -> group(request, op, groupId.apply(request)) ? next.handle(request)
                : refuse(request, Errors.GROUP_AUTHORIZATION_FAILED);
    }

    /**
     * Runs {@code next} only if every topic named by the request allows {@code op}; otherwise the
     * whole request is refused with TOPIC_AUTHORIZATION_FAILED (ShareGroupHeartbeat's subscriptions).
     */
    public ApiHandler requireTopics(AclOperation op, Function<ApiRequest, ? extends Iterable<String>> names,
            ApiHandler next) {
        return request -> {
            Iterable<String> topics = names.apply(request);
            if (topics != null) {
                for (String t : topics) {
                    if (!topic(request, op, t)) {
                        return refuse(request, Errors.TOPIC_AUTHORIZATION_FAILED);
                    }
                }
            }
            return next.handle(request);
        };
    }

    /** Runs {@code next} only if every group the request names allows {@code op} (batched OffsetFetch, describes). */
    public ApiHandler requireGroups(AclOperation op, Function<ApiRequest, ? extends Iterable<String>> groupIds,
            ApiHandler next) {
        return request -> {
            for (String g : groupIds.apply(request)) {
                if (!group(request, op, g)) {
                    return refuse(request, Errors.GROUP_AUTHORIZATION_FAILED);
                }
            }
            return next.handle(request);
        };
    }

    /** Runs {@code next} only if the request's transactional id allows {@code op}. */
    public ApiHandler requireTransactionalId(AclOperation op, Function<ApiRequest, String> id, ApiHandler next) {
        return request -> {
            String txnId = id.apply(request);
            return txnId == null || transactionalId(request, op, txnId) ? next.handle(request)
                    : refuse(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        };
    }

    /**
     * Kafka's rule for an idempotent producer's InitProducerId: IDEMPOTENT_WRITE on the cluster, or
     * WRITE allowed on some topic.
     */
    public boolean mayProduceIdempotently(ApiRequest request) {
        return cluster(request, AclOperation.IDEMPOTENT_WRITE)
                || (enabled() && authorizer.authorizeAny(request.principal(), host(request), AclOperation.WRITE,
                        ResourceType.TOPIC));
    }

    /** Runs {@code next} only if {@code op} on the cluster is allowed. */
    public ApiHandler requireCluster(AclOperation op, ApiHandler next) {
        return request -> cluster(request, op) ? next.handle(request)
                : refuse(request, Errors.CLUSTER_AUTHORIZATION_FAILED);
    }

    private static String host(ApiRequest request) {
        InetSocketAddress remote = request.connection().remoteAddress();
        return remote == null || remote.getAddress() == null ? "" : remote.getAddress().getHostAddress();
    }
}
