package io.pier.group.consumer;

import io.pier.group.PartitionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;

/**
 * Kafka's {@code range} server assignor: per topic, the members subscribed to it (in member-id
 * order) each get one contiguous range of its partitions, the first {@code partitions % members}
 * one partition more. Members with the same subscriptions thus get the same partition numbers of
 * co-partitioned topics, which is what joins across topics need.
 */
public final class RangeAssignor implements PartitionAssignor {
    public static final String NAME = "range";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Set<PartitionKey>> assign(SortedMap<String, Set<Uuid>> subscriptions,
            Map<Uuid, Integer> partitionCounts, Map<String, Set<PartitionKey>> current) {
        Map<String, Set<PartitionKey>> result = new TreeMap<>();
        subscriptions.keySet().forEach(m -> result.put(m, new TreeSet<>()));
        for (Map.Entry<Uuid, Integer> topic : new TreeMap<>(partitionCounts).entrySet()) {
            List<String> members = new ArrayList<>();
            subscriptions.forEach((m, topics) -> {
                if (topics.contains(topic.getKey())) {
                    members.add(m);
                }
            });
            if (members.isEmpty()) {
                continue;
            }
            int count = topic.getValue();
            int each = count / members.size();
            int extra = count % members.size();
            int next = 0;
            for (int i = 0; i < members.size(); i++) {
                int size = each + (i < extra ? 1 : 0);
                for (int p = next; p < next + size; p++) {
                    result.get(members.get(i)).add(new PartitionKey(topic.getKey(), p));
                }
                next += size;
            }
        }
        return result;
    }
}
