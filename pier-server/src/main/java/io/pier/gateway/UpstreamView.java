package io.pier.gateway;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;

/**
 * What the gateway knows of the upstream cluster, from its Metadata answers: its brokers, and the
 * leader of each partition with the topic ids, which is all forwarding needs to route a request.
 * Immutable: a newer answer makes a new view ({@link #merge}), published for every thread to read.
 *
 * @param clusterId the upstream's cluster id, which the gateway reports as its own
 */
record UpstreamView(String clusterId, int controllerId, Map<Integer, Node> brokers, Map<String, Topic> topics,
        Map<Uuid, String> names) {

    /** One upstream topic: its id and the leader of each partition (-1 when it has none). */
    record Topic(String name, Uuid id, int[] leaders) {
        int partitions() {
            return leaders.length;
        }
    }

    static final UpstreamView EMPTY = new UpstreamView(null, -1, Map.of(), Map.of(), Map.of());

    UpstreamView {
        brokers = Map.copyOf(brokers);
        topics = Map.copyOf(topics);
        names = Map.copyOf(names);
    }

    /**
     * This view updated with a Metadata answer: its brokers replace the known ones; each topic it
     * describes replaces the known one, and one it reports unknown is dropped; when it answered for
     * every topic ({@code allTopics}), topics it does not list are dropped too.
     */
    UpstreamView merge(MetadataResponseData answer, boolean allTopics) {
        Map<Integer, Node> b = new HashMap<>();
        for (MetadataResponseData.MetadataResponseBroker broker : answer.brokers()) {
            b.put(broker.nodeId(), new Node(broker.nodeId(), broker.host(), broker.port(), broker.rack()));
        }
        Map<String, Topic> t = allTopics ? new HashMap<>() : new HashMap<>(topics);
        for (MetadataResponseData.MetadataResponseTopic topic : answer.topics()) {
            if (topic.name() == null) {
                continue;
            }
            if (topic.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()) {
                t.remove(topic.name());
                continue;
            }
            if (topic.errorCode() != Errors.NONE.code()) {
                continue; // e.g. LEADER_NOT_AVAILABLE while it is being created: keep what was known
            }
            int size = 0;
            for (MetadataResponseData.MetadataResponsePartition p : topic.partitions()) {
                size = Math.max(size, p.partitionIndex() + 1);
            }
            int[] leaders = new int[size];
            java.util.Arrays.fill(leaders, -1);
            for (MetadataResponseData.MetadataResponsePartition p : topic.partitions()) {
                leaders[p.partitionIndex()] = p.leaderId();
            }
            t.put(topic.name(), new Topic(topic.name(), topic.topicId(), leaders));
        }
        Map<Uuid, String> n = new HashMap<>();
        t.values().forEach(topic -> {
            if (topic.id() != null && !Uuid.ZERO_UUID.equals(topic.id())) {
                n.put(topic.id(), topic.name());
            }
        });
        String cluster = answer.clusterId() != null ? answer.clusterId() : clusterId;
        return new UpstreamView(cluster, answer.controllerId(), b.isEmpty() ? brokers : b, t, n);
    }

    /** The broker leading {@code tp}, or null if the partition or its leader is not known. */
    Node leader(TopicPartition tp) {
        Topic topic = topics.get(tp.topic());
        if (topic == null || tp.partition() < 0 || tp.partition() >= topic.partitions()) {
            return null;
        }
        return brokers.get(topic.leaders()[tp.partition()]);
    }

    /** The name of the topic with this id, or null. */
    String name(Uuid id) {
        return names.get(id);
    }

    /** The id of the named topic, or {@link Uuid#ZERO_UUID}. */
    Uuid id(String name) {
        Topic topic = topics.get(name);
        return topic == null ? Uuid.ZERO_UUID : topic.id();
    }

    List<Node> brokerList() {
        return List.copyOf(brokers.values());
    }
}
