package io.pier.gateway;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;

import io.pier.gateway.StatePartitionAssignor.NodeAddress;
import io.pier.gateway.StatePartitionAssignor.Ownership;
import io.pier.service.ClientConnection;
import io.pier.service.NodeInfo;
import io.pier.state.SharePartitionKey;

/**
 * The gateway nodes of one upstream cluster as clients see them, from the last split of the state
 * partitions ({@link StatePartitionAssignor}): the brokers are the nodes in the group; a
 * topic-partition's leader is the node serving the state partition of its share-partitions; a
 * group's coordinator (and a transactional id's) is the node serving the state partition of its
 * id. Before the first split this node is alone, and leads nothing.
 */
public final class GatewayCluster implements GatewayNodes {
    private final Supplier<NodeInfo> self;
    private final int statePartitions;
    private final GatewayTopics topics;
    private volatile Ownership ownership = Ownership.NONE;
    /** Set by {@link #withdraw}, cleared by the next split. */
    private volatile boolean withdrawn;
    private final CompletableFuture<Void> firstSplit = new CompletableFuture<>();

    GatewayCluster(Supplier<NodeInfo> self, int statePartitions, GatewayTopics topics) {
        this.self = self;
        this.statePartitions = statePartitions;
        this.topics = topics;
    }

    /** Copies upstream topics into this node's metadata. */
    GatewayTopics topics() {
        return topics;
    }

    /** The map of the last rebalance; called on the membership thread. */
    void update(Ownership next) {
        ownership = next;
        withdrawn = false; // a split comes from the group's coordinator: the upstream answers again
        if (!next.nodes().isEmpty()) {
            firstSplit.complete(null);
        }
    }

    /**
     * This node no longer serves what the last split gave it (it lost the upstream): until the
     * next split it names no leader or coordinator for those state partitions, rather than itself.
     * Called on the membership thread.
     */
    void withdraw() {
        int me = self.get().nodeId();
        Ownership o = ownership;
        java.util.Map<Integer, NodeAddress> others = new java.util.HashMap<>(o.owners());
        others.values().removeIf(n -> n.nodeId() == me);
        ownership = new Ownership(others, o.nodes(), o.memberIds());
        withdrawn = true;
    }

    @Override
    public boolean withdrawn() {
        return withdrawn;
    }

    /**
     * Completes once this node has had its first split of the state partitions (it then knows
     * the other nodes), or after {@code maxMs}. Until then it would describe a cluster of itself
     * alone, and a client that read that dropped its connections to the other nodes, failing the
     * requests in flight there.
     */
    CompletableFuture<Void> afterFirstSplit(long maxMs) {
        return firstSplit.isDone() ? firstSplit
                : firstSplit.copy().completeOnTimeout(null, maxMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /**
     * True once this node has had its first split and serves ({@code served}) every state
     * partition the split gives it; false while it is still taking one over.
     */
    boolean settled(IntPredicate served) {
        Ownership o = ownership;
        if (o.nodes().isEmpty()) {
            return false;
        }
        int me = self.get().nodeId();
        for (var e : o.owners().entrySet()) {
            if (e.getValue() != null && e.getValue().nodeId() == me && !served.test(e.getKey())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public List<NodeInfo> all(ClientConnection seenFrom) {
        NodeInfo me = self.get().seenFrom(seenFrom);
        List<NodeInfo> out = new ArrayList<>();
        boolean meListed = false;
        for (NodeAddress n : ownership.nodes()) {
            if (n.nodeId() == me.nodeId()) {
                out.add(me);
                meListed = true;
            } else {
                out.add(new NodeInfo(n.nodeId(), n.host(), n.port(), me.clusterId()));
            }
        }
        if (!meListed) {
            out.add(me);
        }
        out.sort(Comparator.comparingInt(NodeInfo::nodeId));
        return out;
    }

    @Override
    public int self() {
        return self.get().nodeId();
    }

    @Override
    public int controller() {
        return all(null).get(0).nodeId();
    }

    @Override
    public int owner(Uuid topicId, int partition) {
        NodeAddress n = ownership.owners().get(PartitionedShareState.partitionOf(topicId, partition, statePartitions));
        return n == null ? -1 : n.nodeId();
    }

    /**
     * The other node serving the state of {@code key}'s share-partition, as its peers reach it;
     * null when this node serves it or no node does yet.
     */
    Node peerServing(SharePartitionKey key) {
        NodeAddress n = ownership.owners().get(
                PartitionedShareState.partitionOf(key.topicId(), key.partition(), statePartitions));
        return n == null || n.nodeId() == self() ? null : new Node(n.nodeId(), n.host(), n.port());
    }

    /**
     * The other node that serves the share state of the topic-partition, as clients reach it;
     * empty when this node does, or none does yet. For the console.
     */
    public java.util.Optional<NodeInfo> servingElsewhere(Uuid topicId, int partition) {
        return elsewhere(ownership.owners().get(PartitionedShareState.partitionOf(topicId, partition, statePartitions)));
    }

    /** The other node that coordinates the group, as clients reach it; empty when this node does, or none does yet. */
    public java.util.Optional<NodeInfo> coordinatingElsewhere(String groupId) {
        return elsewhere(ownership.owners().get(PartitionedShareState.partitionOf(groupId, statePartitions)));
    }

    private java.util.Optional<NodeInfo> elsewhere(NodeAddress n) {
        NodeInfo me = self.get();
        return n == null || n.nodeId() == me.nodeId() ? java.util.Optional.empty()
                : java.util.Optional.of(new NodeInfo(n.nodeId(), n.host(), n.port(), me.clusterId()));
    }

    /** The last split (for {@link PeerWatch}). */
    Ownership ownership() {
        return ownership;
    }

    /** The other nodes of the last split, as they reach each other. */
    List<Node> peers() {
        List<Node> out = new ArrayList<>();
        for (NodeAddress n : ownership.nodes()) {
            if (n.nodeId() != self()) {
                out.add(new Node(n.nodeId(), n.host(), n.port()));
            }
        }
        return out;
    }

    /** The node coordinating group or transactional id {@code key}, with the client's view of this node; null if none yet. */
    NodeInfo coordinator(String key, ClientConnection seenFrom) {
        NodeAddress n = ownership.owners().get(PartitionedShareState.partitionOf(key, statePartitions));
        if (n == null) {
            return null;
        }
        NodeInfo me = self.get().seenFrom(seenFrom);
        return n.nodeId() == me.nodeId() ? me : new NodeInfo(n.nodeId(), n.host(), n.port(), me.clusterId());
    }

    @Override
    public List<Node> upstreamShare(List<Node> upstreamBrokers) {
        List<NodeInfo> nodes = all(null);
        int me = self.get().nodeId();
        int index = 0;
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).nodeId() == me) {
                index = i;
            }
        }
        List<Node> sorted = new ArrayList<>(upstreamBrokers);
        sorted.sort(Comparator.comparingInt(Node::id));
        List<Node> mine = new ArrayList<>();
        for (int i = 0; i < sorted.size(); i++) {
            if (i % nodes.size() == index) {
                mine.add(sorted.get(i));
            }
        }
        return mine;
    }
}
