package io.pier.gateway;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

import io.pier.protocol.Access;
import io.pier.protocol.ApiHandler;
import io.pier.protocol.ApiRequest;
import io.pier.service.NodeInfo;

/**
 * Which gateway node answers what, when several serve one upstream: FindCoordinator names the
 * node serving the state partition of the group (or transactional id); a share-group request for a
 * group this node does not coordinate is told NOT_COORDINATOR. (A ShareFetch or ShareAcknowledge
 * for a topic-partition whose state another node serves is answered NOT_LEADER_OR_FOLLOWER for
 * that partition by the engine: see {@code SharePersister.serves}.)
 */
final class ShareRouting {
    private static final byte KEY_TYPE_GROUP = 0;
    private static final byte KEY_TYPE_TRANSACTION = 1;

    private final GatewayCluster cluster;
    private final GatewayState state;
    private final Access access;

    ShareRouting(GatewayCluster cluster, GatewayState state, Access access) {
        this.cluster = cluster;
        this.state = state;
        this.access = access;
    }

    /** True if this node serves the state partition of {@code groupId}, so coordinates it. */
    boolean coordinates(String groupId) {
        return state.owns(PartitionedShareState.partitionOf(groupId, state.partitions()));
    }

    CompletableFuture<AbstractResponse> findCoordinator(ApiRequest request) {
        FindCoordinatorRequestData in = request.bodyAs(FindCoordinatorRequest.class).data();
        FindCoordinatorResponseData out = new FindCoordinatorResponseData();
        if (request.version() < 4) {
            Answer a = coordinator(in.keyType(), in.key(), request);
            out.setErrorCode(a.error.code()).setErrorMessage(a.message).setNodeId(a.node.nodeId())
                    .setHost(a.node.host()).setPort(a.node.port());
        } else {
            for (String key : in.coordinatorKeys()) {
                Answer a = coordinator(in.keyType(), key, request);
                out.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                        .setErrorCode(a.error.code()).setErrorMessage(a.message).setNodeId(a.node.nodeId())
                        .setHost(a.node.host()).setPort(a.node.port()));
            }
        }
        return CompletableFuture.completedFuture(Messages.response(ApiKeys.FIND_COORDINATOR, out, request.version()));
    }

    private record Answer(Errors error, String message, NodeInfo node) {}

    private static final NodeInfo NONE = new NodeInfo(-1, "", -1, null);

    private Answer coordinator(byte keyType, String key, ApiRequest request) {
        if (keyType != KEY_TYPE_GROUP && keyType != KEY_TYPE_TRANSACTION) {
            return new Answer(Errors.INVALID_REQUEST, "coordinator key type " + keyType + " is not served to clients",
                    NONE);
        }
        // Kafka's check per key: DESCRIBE on the group, or on the transactional id.
        if (keyType == KEY_TYPE_GROUP && !access.group(request, AclOperation.DESCRIBE, key)) {
            return new Answer(Errors.GROUP_AUTHORIZATION_FAILED, null, NONE);
        }
        if (keyType == KEY_TYPE_TRANSACTION && !access.transactionalId(request, AclOperation.DESCRIBE, key)) {
            return new Answer(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null, NONE);
        }
        NodeInfo node = cluster.coordinator(key, request.connection());
        return node == null
                ? new Answer(Errors.COORDINATOR_NOT_AVAILABLE, "no gateway node serves its state partition yet", NONE)
                : new Answer(Errors.NONE, null, node);
    }

    CompletableFuture<AbstractResponse> describeCluster(ApiRequest request, String clusterId) {
        DescribeClusterRequestData in = request.bodyAs(DescribeClusterRequest.class).data();
        DescribeClusterResponseData out = new DescribeClusterResponseData().setClusterId(clusterId)
                .setControllerId(cluster.controller()).setEndpointType(in.endpointType())
                .setClusterAuthorizedOperations(in.includeClusterAuthorizedOperations() && access.enabled()
                        ? access.clusterOperations(request) : Access.OPERATIONS_OMITTED);
        for (NodeInfo n : cluster.all(request.connection())) {
            out.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(n.nodeId())
                    .setHost(n.host()).setPort(n.port()));
        }
        return CompletableFuture.completedFuture(Messages.response(ApiKeys.DESCRIBE_CLUSTER, out, request.version()));
    }

    /**
     * Why this node does not answer for {@code groupId}: COORDINATOR_LOAD_IN_PROGRESS while it is
     * taking the group's state partition over (the client waits and asks again here), else
     * NOT_COORDINATOR (the client looks the coordinator up again).
     */
    Errors notHere(String groupId, ApiRequest request) {
        NodeInfo owner = cluster.coordinator(groupId, request.connection());
        return owner != null && owner.nodeId() == cluster.self() ? Errors.COORDINATOR_LOAD_IN_PROGRESS
                : Errors.NOT_COORDINATOR;
    }

    /**
     * A request that needs all the share state this node serves (ListGroups; a group's offsets,
     * described, altered or deleted): COORDINATOR_LOAD_IN_PROGRESS, which Admin retries, until the
     * node has had its first split and has taken over every state partition it was given. Answered
     * before, it would leave out the groups and share-partitions of the state partitions still
     * being taken over, as if they did not exist, or fail their partitions for good.
     */
    ApiHandler whenSettled(ApiHandler handler) {
        return request -> cluster.settled(state::owns) ? handler.handle(request)
                : CompletableFuture.completedFuture(request.body().getErrorResponse(0,
                        Errors.COORDINATOR_LOAD_IN_PROGRESS.exception()));
    }

    /** A share-group request for some groups: answered here only if this node coordinates them all. */
    ApiHandler ifCoordinator(java.util.function.Function<ApiRequest, List<String>> groupIds, ApiHandler local) {
        return request -> {
            for (String groupId : groupIds.apply(request)) {
                if (!coordinates(groupId)) {
                    return CompletableFuture.completedFuture(request.body().getErrorResponse(0,
                            notHere(groupId, request).exception()));
                }
            }
            return local.handle(request);
        };
    }

    /** ShareGroupHeartbeat: NOT_COORDINATOR unless this node coordinates the group. */
    ApiHandler heartbeat(java.util.function.Function<ApiRequest, String> groupId, ApiHandler local) {
        return request -> {
            if (coordinates(groupId.apply(request))) {
                return local.handle(request);
            }
            Errors error = notHere(groupId.apply(request), request);
            ShareGroupHeartbeatResponseData out = new ShareGroupHeartbeatResponseData()
                    .setErrorCode(error.code())
                    .setErrorMessage(error == Errors.NOT_COORDINATOR ? "another gateway node coordinates this group"
                            : "this gateway node is taking the group's state over");
            return CompletableFuture.completedFuture(Messages.response(ApiKeys.SHARE_GROUP_HEARTBEAT, out,
                    request.version()));
        };
    }
}
