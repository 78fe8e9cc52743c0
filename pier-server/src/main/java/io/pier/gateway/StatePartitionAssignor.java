package io.pier.gateway;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Configurable;

/**
 * Splits the partitions of the gateway's state topic among the gateway nodes of one group on the
 * upstream (Kafka's classic group protocol, as Kafka Connect workers split their tasks): each
 * node gets an equal share, keeps what it owned where it can (a state partition moves only when
 * the balance needs it), and, under the cooperative protocol, a partition still owned by one node
 * goes to another only in the rebalance after the first gave it up, so two nodes never serve one
 * state partition. Each node's subscription carries its node id and address; every assignment
 * carries the whole map (state partition → node), so each node can tell clients which node leads
 * which topic-partition and coordinates which group.
 */
public final class StatePartitionAssignor implements ConsumerPartitionAssignor, Configurable {
    /** Consumer settings that hand the assignor its state topic, its node and its listener. */
    static final String TOPIC_CONFIG = "pier.gateway.assignor.topic";
    static final String SELF_CONFIG = "pier.gateway.assignor.self";
    static final String LISTENER_CONFIG = "pier.gateway.assignor.listener";

    /** A gateway node as the others must know it. */
    public record NodeAddress(int nodeId, String host, int port) {
        String encode() {
            return nodeId + "@" + host + ":" + port;
        }

        static NodeAddress decode(String s) {
            int at = s.indexOf('@');
            int colon = s.lastIndexOf(':');
            return new NodeAddress(Integer.parseInt(s.substring(0, at)), s.substring(at + 1, colon),
                    Integer.parseInt(s.substring(colon + 1)));
        }
    }

    /**
     * Who serves which state partition, as the last rebalance decided, and each node's member id
     * in the group (by node id), so that a node can have the group drop another that died
     * ({@link PeerWatch}).
     */
    public record Ownership(Map<Integer, NodeAddress> owners, List<NodeAddress> nodes, Map<Integer, String> memberIds) {
        public static final Ownership NONE = new Ownership(Map.of(), List.of());

        public Ownership {
            owners = Map.copyOf(owners);
            nodes = List.copyOf(nodes);
            memberIds = Map.copyOf(memberIds);
        }

        public Ownership(Map<Integer, NodeAddress> owners, List<NodeAddress> nodes) {
            this(owners, nodes, Map.of());
        }

        ByteBuffer encode() {
            StringBuilder out = new StringBuilder();
            nodes.forEach(n -> out.append(n.encode()).append(','));
            out.append(';');
            new TreeMap<>(owners).forEach((p, n) -> out.append(p).append('=').append(n.nodeId()).append(','));
            out.append(';');
            new TreeMap<>(memberIds).forEach((id, member) -> out.append(id).append('=').append(member).append(','));
            return ByteBuffer.wrap(out.toString().getBytes(StandardCharsets.UTF_8));
        }

        static Ownership decode(ByteBuffer data) {
            if (data == null || !data.hasRemaining()) {
                return NONE;
            }
            byte[] bytes = new byte[data.remaining()];
            data.duplicate().get(bytes);
            String[] halves = new String(bytes, StandardCharsets.UTF_8).split(";", -1);
            Map<Integer, NodeAddress> byId = new HashMap<>();
            List<NodeAddress> nodes = new ArrayList<>();
            for (String n : halves[0].split(",")) {
                if (!n.isEmpty()) {
                    NodeAddress a = NodeAddress.decode(n);
                    nodes.add(a);
                    byId.put(a.nodeId(), a);
                }
            }
            Map<Integer, NodeAddress> owners = new HashMap<>();
            for (String e : halves[1].split(",")) {
                if (!e.isEmpty()) {
                    int eq = e.indexOf('=');
                    owners.put(Integer.parseInt(e.substring(0, eq)), byId.get(Integer.parseInt(e.substring(eq + 1))));
                }
            }
            Map<Integer, String> memberIds = new HashMap<>();
            // A node of an older version sends no member ids: then none are known.
            for (String e : halves.length > 2 ? halves[2].split(",") : new String[0]) {
                if (!e.isEmpty()) {
                    int eq = e.indexOf('=');
                    memberIds.put(Integer.parseInt(e.substring(0, eq)), e.substring(eq + 1));
                }
            }
            return new Ownership(owners, nodes, memberIds);
        }
    }

    private String topic;
    private NodeAddress self;
    /**
     * When this member was made (wall ms), sent with its address: of two members with one node id
     * (a node restarted before the group dropped its old member), the newer serves.
     */
    private long incarnation = System.currentTimeMillis();
    private Consumer<Ownership> onAssignment = o -> { };

    /** Made by the consumer from its settings; {@link #configure} gives it its topic and node. */
    public StatePartitionAssignor() {
    }

    /**
     * @param topic the state topic
     * @param self this node, sent in its subscription
     * @param incarnation when this member was made, sent with it (see {@link #incarnation})
     * @param onAssignment told the whole map after each rebalance, on the membership thread
     */
    StatePartitionAssignor(String topic, NodeAddress self, long incarnation, Consumer<Ownership> onAssignment) {
        this.topic = topic;
        this.self = self;
        this.incarnation = incarnation;
        this.onAssignment = onAssignment;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void configure(Map<String, ?> configs) {
        this.topic = (String) configs.get(TOPIC_CONFIG);
        this.self = (NodeAddress) configs.get(SELF_CONFIG);
        Object listener = configs.get(LISTENER_CONFIG);
        if (listener != null) {
            this.onAssignment = (Consumer<Ownership>) listener;
        }
    }

    @Override
    public String name() {
        return "pier-state-partitions";
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return List.of(RebalanceProtocol.COOPERATIVE);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        return ByteBuffer.wrap((self.encode() + "#" + incarnation).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        onAssignment.accept(Ownership.decode(assignment.userData()));
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        Integer count = metadata.partitionCountForTopic(topic);
        Map<String, Subscription> all = new TreeMap<>(groupSubscription.groupSubscription());
        Map<String, Subscription> members = newestOfEachNode(all);
        Map<String, NodeAddress> addresses = new HashMap<>();
        Map<String, List<Integer>> owned = new HashMap<>();
        members.forEach((id, s) -> {
            addresses.put(id, decodeAddress(s.userData()));
            List<Integer> mine = new ArrayList<>();
            s.ownedPartitions().forEach(tp -> {
                if (tp.topic().equals(topic)) {
                    mine.add(tp.partition());
                }
            });
            owned.put(id, mine);
        });
        Map<String, List<Integer>> plan = plan(count == null ? 0 : count, owned);
        Map<Integer, NodeAddress> owners = new HashMap<>();
        plan.forEach((id, parts) -> parts.forEach(p -> owners.put(p, addresses.get(id))));
        List<NodeAddress> nodes = new ArrayList<>(addresses.values());
        nodes.sort((a, b) -> Integer.compare(a.nodeId(), b.nodeId()));
        Map<Integer, String> memberIds = new HashMap<>();
        addresses.forEach((member, address) -> memberIds.put(address.nodeId(), member));
        ByteBuffer map = new Ownership(owners, nodes, memberIds).encode();
        Map<String, Assignment> out = new HashMap<>();
        // An older member of a node that is back gets nothing: it is dead, or (a zombie) fenced.
        all.keySet().forEach(id -> out.put(id, new Assignment(List.of(), map.duplicate())));
        plan.forEach((id, parts) -> {
            List<TopicPartition> tps = new ArrayList<>();
            parts.forEach(p -> tps.add(new TopicPartition(topic, p)));
            out.put(id, new Assignment(tps, map.duplicate()));
        });
        return new GroupAssignment(out);
    }

    /**
     * The members to split the partitions among: of several with one node id, the one made last.
     * Without this a restarted node and its old member, until the group's session timeout drops
     * it, were both listed, and clients told of the node twice (kafka-clients' Metadata fails on a
     * broker id listed twice).
     */
    private static Map<String, Subscription> newestOfEachNode(Map<String, Subscription> members) {
        Map<Integer, String> newest = new HashMap<>();
        members.forEach((id, s) -> newest.merge(decodeAddress(s.userData()).nodeId(), id,
                (a, b) -> incarnationOf(members.get(a)) >= incarnationOf(members.get(b)) ? a : b));
        Map<String, Subscription> out = new TreeMap<>();
        newest.values().forEach(id -> out.put(id, members.get(id)));
        return out;
    }

    private static String text(ByteBuffer data) {
        byte[] bytes = new byte[data.remaining()];
        data.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static NodeAddress decodeAddress(ByteBuffer data) {
        String s = text(data);
        int hash = s.indexOf('#');
        return NodeAddress.decode(hash < 0 ? s : s.substring(0, hash));
    }

    /** 0 for a member of an older version, which sends none. */
    private static long incarnationOf(Subscription s) {
        String text = text(s.userData());
        int hash = text.indexOf('#');
        return hash < 0 ? 0 : Long.parseLong(text.substring(hash + 1));
    }

    /**
     * The cooperative sticky plan: members (by id, in order) and the partitions each owns now in,
     * the partitions each is to own out. Each member's quota is {@code count / members}, the first
     * members by how much they own getting one more for the remainder; a member keeps what it owns
     * up to its quota; a partition no one owns goes to a member below its quota; a partition one
     * member gives up (above its quota, or owned twice) is left out this round and handed on in the
     * next, once its owner has let it go.
     */
    static Map<String, List<Integer>> plan(int count, Map<String, List<Integer>> owned) {
        List<String> ids = new ArrayList<>(new TreeMap<>(owned).keySet());
        Map<String, List<Integer>> out = new TreeMap<>();
        if (ids.isEmpty()) {
            return out;
        }
        // Who gets the extra partitions: those owning the most, then by id, so few partitions move.
        List<String> byOwned = new ArrayList<>(ids);
        byOwned.sort((a, b) -> Integer.compare(owned.get(b).size(), owned.get(a).size()));
        int base = count / ids.size();
        int extra = count % ids.size();
        Map<String, Integer> quota = new HashMap<>();
        for (int i = 0; i < byOwned.size(); i++) {
            quota.put(byOwned.get(i), base + (i < extra ? 1 : 0));
        }
        Set<Integer> claimed = new HashSet<>();
        Set<Integer> stillOwned = new HashSet<>();
        for (String id : ids) {
            List<Integer> keep = new ArrayList<>();
            List<Integer> mine = new ArrayList<>(owned.get(id));
            Collections.sort(mine);
            for (int p : mine) {
                if (p < 0 || p >= count) {
                    continue;
                }
                stillOwned.add(p);
                if (keep.size() < quota.get(id) && claimed.add(p)) {
                    keep.add(p);
                }
            }
            out.put(id, keep);
        }
        List<Integer> free = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            if (!stillOwned.contains(p)) {
                free.add(p);
            }
        }
        int next = 0;
        for (String id : ids) {
            List<Integer> mine = out.get(id);
            while (mine.size() < quota.get(id) && next < free.size()) {
                mine.add(free.get(next++));
            }
            Collections.sort(mine);
        }
        return out;
    }
}
