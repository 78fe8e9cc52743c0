package io.pier.gateway;

import java.util.List;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;

import io.pier.service.ClientConnection;
import io.pier.service.NodeInfo;

/**
 * The gateway nodes as clients are to see them: the brokers of the cluster, the leader of each
 * partition (the node that serves its share groups) and the part of the upstream's per-broker
 * listings (ListGroups, ListTransactions) each node answers for, so that a client asking every
 * broker sees each upstream group once.
 */
interface GatewayNodes {
    /** Every gateway node, with the address of the listener {@code seenFrom} came through. */
    List<NodeInfo> all(ClientConnection seenFrom);

    /** This node's id. */
    int self();

    /** The node named as controller. */
    int controller();

    /** The node that leads this topic-partition for clients, or -1 while none does. */
    int owner(Uuid topicId, int partition);

    /** The upstream brokers whose listings this node forwards. */
    List<Node> upstreamShare(List<Node> upstreamBrokers);

    /**
     * True while this node has given its state partitions up for lack of upstream answers (see
     * {@link ServingLease}) and is not back in the gateway group: what it would forward to the
     * upstream waits out the client's timeout there.
     */
    default boolean withdrawn() {
        return false;
    }
}
