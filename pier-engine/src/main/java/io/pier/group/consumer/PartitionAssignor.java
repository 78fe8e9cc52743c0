package io.pier.group.consumer;

import io.pier.group.PartitionKey;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import org.apache.kafka.common.Uuid;

/**
 * A server-side assignor of consumer-protocol groups: from the members' subscriptions, the
 * subscribed topics' partition counts and the current target, the next target, in which every
 * subscribed partition belongs to exactly one member subscribed to its topic. Pure functions; the
 * coordinator calls them on its own thread.
 */
public interface PartitionAssignor {
    String name();

    /**
     * @param subscriptions member id (sorted) to the ids of the topics it subscribes to that exist
     * @param partitionCounts topic id to partition count, for every topic in {@code subscriptions}
     * @param current the current target, member id to partitions (members may have left)
     * @return member id to partitions, with an entry for every member
     */
    Map<String, Set<PartitionKey>> assign(SortedMap<String, Set<Uuid>> subscriptions,
            Map<Uuid, Integer> partitionCounts, Map<String, Set<PartitionKey>> current);

    /** The assignor called {@code name} ({@code group.consumer.assignors}, {@code group.remote.assignor}), or null. */
    static PartitionAssignor byName(String name) {
        if (UniformAssignor.NAME.equals(name)) {
            return new UniformAssignor();
        }
        if (RangeAssignor.NAME.equals(name)) {
            return new RangeAssignor();
        }
        return null;
    }
}
