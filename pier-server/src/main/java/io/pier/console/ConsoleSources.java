package io.pier.console;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * What the console reads beyond the published metrics snapshots: facts about the broker, a
 * group's settings (published by its coordinator for every thread), and group members, which the
 * coordinators' shards describe on request through their command queues (the path Admin's describe
 * requests take), so the HTTP thread never reads engine state.
 */
public interface ConsoleSources {
    /** The broker as the overview shows it; no setting values, so nothing secret. */
    record BrokerFacts(int nodeId, String clusterId, boolean gateway, int shards, Map<String, String> listeners) {
        public BrokerFacts {
            listeners = Map.copyOf(listeners);
        }
    }

    /** A share group's settings the console shows. */
    record ShareGroupSettings(boolean orderedByKey, String deadLetterTopic, int deliveryCountLimit) {}

    /** One member of a group with the partitions assigned to it. */
    record Member(String memberId, String clientId, String clientHost, int memberEpoch, List<TopicPartition> assigned) {
        public Member {
            assigned = List.copyOf(assigned);
        }
    }

    /** Another gateway node, named as clients reach it. */
    record NodeRef(int nodeId, String address) {
        @Override
        public String toString() {
            return "node " + nodeId + " (" + address + ")";
        }
    }

    BrokerFacts broker();

    /** On a gateway of several nodes, the node coordinating the share group when it is another; empty on a broker. */
    default Optional<NodeRef> coordinatorElsewhere(String groupId) {
        return Optional.empty();
    }

    /** On a gateway of several nodes, the node serving the share state of a topic-partition when it is another. */
    default Optional<NodeRef> servedElsewhere(String topic, int partition) {
        return Optional.empty();
    }

    ShareGroupSettings shareGroupSettings(String groupId);

    /** A share group's members; empty if there is no such share group. */
    CompletableFuture<Optional<List<Member>>> shareGroupMembers(String groupId);

    /** A consumer group's members (either protocol); empty if there is no such consumer group. */
    CompletableFuture<Optional<List<Member>>> consumerGroupMembers(String groupId);
}
