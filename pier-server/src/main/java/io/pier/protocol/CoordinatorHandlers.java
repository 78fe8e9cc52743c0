package io.pier.protocol;

import io.pier.service.NodeInfo;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
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

    public CoordinatorHandlers(Supplier<NodeInfo> node) {
        this.node = node;
    }

    public CompletableFuture<AbstractResponse> findCoordinator(ApiRequest request) {
        FindCoordinatorRequest body = request.bodyAs(FindCoordinatorRequest.class);
        byte keyType = body.data().keyType();
        // The key type is per request, so every key of a batched (v4+) request gets the same answer.
        Errors error = errorFor(keyType);
        boolean served = error == Errors.NONE;
        NodeInfo n = served ? node.get().seenFrom(request.connection()) : NO_COORDINATOR;
        String message = served ? null : messageFor(keyType);
        FindCoordinatorResponseData data = new FindCoordinatorResponseData();
        if (request.version() < 4) {
            data.setErrorCode(error.code()).setErrorMessage(message)
                    .setNodeId(n.nodeId()).setHost(n.host()).setPort(n.port());
        } else {
            for (String key : body.data().coordinatorKeys()) {
                data.coordinators().add(new FindCoordinatorResponseData.Coordinator()
                        .setKey(key)
                        .setErrorCode(error.code()).setErrorMessage(message)
                        .setNodeId(n.nodeId()).setHost(n.host()).setPort(n.port()));
            }
        }
        return CompletableFuture.completedFuture(new FindCoordinatorResponse(data));
    }

    private static Errors errorFor(byte keyType) {
        if (keyType == KEY_TYPE_GROUP || keyType == KEY_TYPE_TRANSACTION) {
            // Transactions are refused at InitProducerId with a clear error rather than here,
            // where the client would retry until its timeout.
            return Errors.NONE;
        }
        // SHARE keys are for inter-broker state RPCs, which a client may not use.
        return Errors.INVALID_REQUEST;
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
                .setClusterAuthorizedOperations(Integer.MIN_VALUE);
        data.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker()
                .setBrokerId(n.nodeId()).setHost(n.host()).setPort(n.port()));
        return CompletableFuture.completedFuture(new DescribeClusterResponse(data));
    }
}
