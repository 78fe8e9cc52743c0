package io.pier.group;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.common.Uuid;

/** A member's partitions in the two shapes the group APIs answer with. */
public final class Assignments {
    private Assignments() {}

    /** Topic id (ascending) to its sorted partitions, as heartbeat responses carry them. */
    public static Map<Uuid, List<Integer>> byTopic(Set<PartitionKey> partitions) {
        TreeMap<Uuid, List<Integer>> byTopic = new TreeMap<>();
        for (PartitionKey p : new TreeSet<>(partitions)) {
            byTopic.computeIfAbsent(p.topicId(), t -> new ArrayList<>()).add(p.partition());
        }
        byTopic.replaceAll((topic, ps) -> List.copyOf(ps));
        return Collections.unmodifiableMap(byTopic);
    }

    /**
     * One entry per topic, sorted by name, as the Describe APIs show them; {@code names} gives a
     * topic id's name, or null, which falls back to {@code lookup} and then to "" (a deleted topic).
     */
    public static List<AssignedTopic> describe(Set<PartitionKey> partitions, Function<Uuid, String> names,
            TopicLookup lookup) {
        List<AssignedTopic> result = new ArrayList<>();
        byTopic(partitions).forEach((topicId, ps) -> {
            String name = names.apply(topicId);
            if (name == null) {
                name = lookup.byId(topicId).map(TopicInfo::name).orElse("");
            }
            result.add(new AssignedTopic(topicId, name, ps));
        });
        result.sort(Comparator.comparing(AssignedTopic::topicName));
        return List.copyOf(result);
    }
}
