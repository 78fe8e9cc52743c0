package io.pier.gateway;

import java.util.concurrent.CompletableFuture;

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

    ShareRouting(GatewayCluster cluster, GatewayState state) {
        this.cluster = cluster;
        this.state = state;
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
        NodeInfo node = cluster.coordinator(key, request.connection());
        return node == null
                ? new Answer(Errors.COORDINATOR_NOT_AVAILABLE, "no gateway node serves its state partition yet", NONE)
                : new Answer(Errors.NONE, null, node);
    }

    CompletableFuture<AbstractResponse> describeCluster(ApiRequest request, String clusterId) {
        DescribeClusterRequestData in = request.bodyAs(DescribeClusterRequest.class).data();
        DescribeClusterResponseData out = new DescribeClusterResponseData().setClusterId(clusterId)
                .setControllerId(cluster.controller()).setEndpointType(in.endpointType());
        for (NodeInfo n : cluster.all(request.connection())) {
            out.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(n.nodeId())
                    .setHost(n.host()).setPort(n.port()));
        }
        return CompletableFuture.completedFuture(Messages.response(ApiKeys.DESCRIBE_CLUSTER, out, request.version()));
    }

    /** A share-group request for one group: answered here only if this node coordinates it. */
    ApiHandler ifCoordinator(java.util.function.Function<ApiRequest, String> groupId, ApiHandler local) {
        return request -> coordinates(groupId.apply(request)) ? local.handle(request)
                : CompletableFuture.completedFuture(request.body().getErrorResponse(0,
                        Errors.NOT_COORDINATOR.exception("another gateway node coordinates this group")));
    }

    /** ShareGroupHeartbeat: NOT_COORDINATOR unless this node coordinates the group. */
    ApiHandler heartbeat(java.util.function.Function<ApiRequest, String> groupId, ApiHandler local) {
        return request -> {
            if (coordinates(groupId.apply(request))) {
                return local.handle(request);
            }
            ShareGroupHeartbeatResponseData out = new ShareGroupHeartbeatResponseData()
                    .setErrorCode(Errors.NOT_COORDINATOR.code())
                    .setErrorMessage("another gateway node coordinates this group");
            return CompletableFuture.completedFuture(Messages.response(ApiKeys.SHARE_GROUP_HEARTBEAT, out,
                    request.version()));
        };
    }
}
