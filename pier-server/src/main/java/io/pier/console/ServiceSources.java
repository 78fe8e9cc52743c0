package io.pier.console;

import io.pier.group.AssignedTopic;
import io.pier.group.ClassicGroupDescription;
import io.pier.group.GroupConfig;
import io.pier.group.GroupDescription;
import io.pier.group.MemberDescription;
import io.pier.group.consumer.ConsumerGroupDescription;
import io.pier.service.BrokerServices;
import io.pier.service.ConsumerGroups;
import io.pier.service.NodeInfo;
import io.pier.state.TopicMetadata;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/** The console's sources in a running broker: its services and its node. */
public final class ServiceSources implements ConsoleSources {
    private static final String CONSUMER_PROTOCOL_TYPE = "consumer";

    /** Which gateway node serves what, as the last split of the state says. */
    public interface Placement {
        /** The other node coordinating the group; empty if this node does, or none does yet. */
        Optional<NodeInfo> coordinatingElsewhere(String groupId);

        /** The other node serving the topic-partition's share state; empty if this node does, or none yet. */
        Optional<NodeInfo> servingElsewhere(Uuid topicId, int partition);
    }

    private final BrokerServices services;
    private final Supplier<NodeInfo> node;
    /** Null on a broker, where everything is here. */
    private final Placement placement;

    /**
     * @param node the node, known once the listeners are bound (before the console serves a page)
     * @param placement on a gateway, where its nodes serve share state; null on a broker
     */
    public ServiceSources(BrokerServices services, Supplier<NodeInfo> node, Placement placement) {
        this.services = services;
        this.node = node;
        this.placement = placement;
    }

    @Override
    public BrokerFacts broker() {
        NodeInfo n = node.get();
        Map<String, String> listeners = new LinkedHashMap<>();
        n.listeners().forEach((name, a) -> listeners.put(name, a.host() + ":" + a.port()));
        return new BrokerFacts(n.nodeId(), n.clusterId(), placement != null, services.shardCount(), listeners);
    }

    @Override
    public Optional<NodeRef> coordinatorElsewhere(String groupId) {
        return placement == null ? Optional.empty() : placement.coordinatingElsewhere(groupId).map(ServiceSources::ref);
    }

    @Override
    public Optional<NodeRef> servedElsewhere(String topic, int partition) {
        TopicMetadata t = services.topics().topic(topic);
        return placement == null || t == null ? Optional.empty()
                : placement.servingElsewhere(t.id(), partition).map(ServiceSources::ref);
    }

    private static NodeRef ref(NodeInfo n) {
        return new NodeRef(n.nodeId(), n.host() + ":" + n.port());
    }

    @Override
    public ShareGroupSettings shareGroupSettings(String groupId) {
        GroupConfig c = services.shareGroups().config(groupId);
        return new ShareGroupSettings(c.effectiveOrderByKey(), c.effectiveDeadLetterTopic(),
                c.effectiveDeliveryCountLimit());
    }

    @Override
    public CompletableFuture<Optional<List<Member>>> shareGroupMembers(String groupId) {
        return services.shareGroups().describe(groupId).thenApply(d -> d.map(ServiceSources::members));
    }

    @Override
    public CompletableFuture<Optional<List<Member>>> consumerGroupMembers(String groupId) {
        ConsumerGroups groups = services.consumerGroups();
        return groups.consumerDescribe(groupId).thenCompose(consumer -> {
            if (consumer.group().isPresent()) {
                return CompletableFuture.completedFuture(consumer.group().map(ServiceSources::consumerMembers));
            }
            return groups.describe(groupId).thenApply(classic -> classic.group().map(ServiceSources::classicMembers));
        });
    }

    private static List<Member> members(GroupDescription d) {
        List<Member> out = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            out.add(new Member(m.memberId(), m.clientId(), m.clientHost(), m.memberEpoch(), partitions(m.assignment())));
        }
        return out;
    }

    private static List<Member> consumerMembers(ConsumerGroupDescription d) {
        List<Member> out = new ArrayList<>();
        for (ConsumerGroupDescription.Member m : d.members()) {
            out.add(new Member(m.memberId(), m.clientId(), m.clientHost(), m.memberEpoch(), partitions(m.assignment())));
        }
        return out;
    }

    private static List<Member> classicMembers(ClassicGroupDescription d) {
        List<Member> out = new ArrayList<>();
        for (ClassicGroupDescription.Member m : d.members()) {
            out.add(new Member(m.memberId(), m.clientId(), m.clientHost(), -1,
                    CONSUMER_PROTOCOL_TYPE.equals(d.protocolType()) ? classicAssignment(m.assignment()) : List.of()));
        }
        return out;
    }

    /** A classic consumer's assignment as its leader wrote it; none if it is not the consumer protocol's. */
    private static List<TopicPartition> classicAssignment(byte[] assignment) {
        if (assignment == null || assignment.length == 0) {
            return List.of();
        }
        try {
            return ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(assignment)).partitions();
        } catch (RuntimeException e) {
            // A client-side assignor may write anything; the console shows what it can read.
            return List.of();
        }
    }

    private static List<TopicPartition> partitions(List<AssignedTopic> assignment) {
        List<TopicPartition> out = new ArrayList<>();
        for (AssignedTopic t : assignment) {
            for (int p : t.partitions()) {
                out.add(new TopicPartition(t.topicName(), p));
            }
        }
        return out;
    }
}
