package io.pier.protocol;

import io.pier.service.NodeInfo;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;

/** FindCoordinator and DescribeCluster: on a single node, this node is the answer to both. */
public final class CoordinatorHandlers {
    private static final int KEY_TYPE_GROUP = 0;
    private static final int KEY_TYPE_TRANSACTION = 1;
    /** The coordinator fields of an error answer, as Kafka sends them. */
    private static final NodeInfo NO_COORDINATOR = new NodeInfo(-1, "", -1, null);
    private final Supplier<NodeInfo> node;

    private final Access access;

    public CoordinatorHandlers(Supplier<NodeInfo> node, Access access) {
        this.node = node;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> findCoordinator(ApiRequest request) {
        FindCoordinatorRequest body = request.bodyAs(FindCoordinatorRequest.class);
        byte keyType = body.data().keyType();
        // The key type is per request, so every key of a batched (v4+) request gets the same answer.
        Errors error = errorFor(request, keyType);
        boolean served = error == Errors.NONE;
        NodeInfo n = served ? node.get().seenFrom(request.connection()) : NO_COORDINATOR;
        String message = error == Errors.INVALID_REQUEST ? messageFor(keyType) : null;
        FindCoordinatorResponseData data = new FindCoordinatorResponseData();
        if (request.version() < 4) {
            Errors denied = served ? denied(request, keyType, body.data().key()) : Errors.NONE;
            NodeInfo m = denied == Errors.NONE ? n : NO_COORDINATOR;
            data.setErrorCode(denied == Errors.NONE ? error.code() : denied.code()).setErrorMessage(message)
                    .setNodeId(m.nodeId()).setHost(m.host()).setPort(m.port());
        } else {
            for (String key : body.data().coordinatorKeys()) {
                Errors denied = served ? denied(request, keyType, key) : Errors.NONE;
                NodeInfo m = denied == Errors.NONE ? n : NO_COORDINATOR;
                data.coordinators().add(new FindCoordinatorResponseData.Coordinator()
                        .setKey(key)
                        .setErrorCode(denied == Errors.NONE ? error.code() : denied.code()).setErrorMessage(message)
                        .setNodeId(m.nodeId()).setHost(m.host()).setPort(m.port()));
            }
        }
        return CompletableFuture.completedFuture(new FindCoordinatorResponse(data));
    }

    /** Kafka's check per key: DESCRIBE on the group, or on the transactional id. */
    private Errors denied(ApiRequest request, byte keyType, String key) {
        if (keyType == KEY_TYPE_GROUP) {
            return access.group(request, AclOperation.DESCRIBE, key) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
        }
        return access.transactionalId(request, AclOperation.DESCRIBE, key) ? Errors.NONE
                : Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    }

    private Errors errorFor(ApiRequest request, byte keyType) {
        if (keyType == KEY_TYPE_GROUP || keyType == KEY_TYPE_TRANSACTION) {
            // Transactions are refused at InitProducerId with a clear error rather than here,
            // where the client would retry until its timeout.
            return Errors.NONE;
        }
        // SHARE keys are for inter-broker state RPCs, which a client may not use; Kafka asks
        // CLUSTER_ACTION for them, so a principal without it learns only that.
        return access.cluster(request, AclOperation.CLUSTER_ACTION) ? Errors.INVALID_REQUEST
                : Errors.CLUSTER_AUTHORIZATION_FAILED;
    }

    private static String messageFor(byte keyType) {
        return "coordinator key type " + keyType + " is not served to clients";
    }

    public CompletableFuture<AbstractResponse> describeCluster(ApiRequest request) {
        DescribeClusterRequest body = request.bodyAs(DescribeClusterRequest.class);
        NodeInfo n = node.get().seenFrom(request.connection());
        DescribeClusterResponseData data = new DescribeClusterResponseData()
                .setClusterId(n.clusterId())
                .setControllerId(n.nodeId())
                .setEndpointType(body.data().endpointType())
                .setClusterAuthorizedOperations(body.data().includeClusterAuthorizedOperations()
                        ? access.clusterOperations(request) : Access.OPERATIONS_OMITTED);
        data.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker()
                .setBrokerId(n.nodeId()).setHost(n.host()).setPort(n.port()));
        return CompletableFuture.completedFuture(new DescribeClusterResponse(data));
    }
}
