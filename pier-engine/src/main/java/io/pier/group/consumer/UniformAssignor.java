package io.pier.group.consumer;

import io.pier.group.PartitionKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;

/**
 * Kafka's default {@code uniform} server assignor: balanced and sticky. Partitions stay with the
 * member that has them in the current target while it still subscribes to their topic; the rest
 * go, fewest-eligible-members first, to the eligible member with the fewest partitions; then
 * partitions move one at a time from a member to an eligible one that has at least two fewer,
 * until no such move exists. With equal subscriptions the counts end at most one apart; with
 * different subscriptions every member is as balanced as its topics let single moves make it.
 *
 * <p>Ties go to the smaller member id, so the result depends only on the inputs.
 */
public final class UniformAssignor implements PartitionAssignor {
    public static final String NAME = "uniform";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Set<PartitionKey>> assign(SortedMap<String, Set<Uuid>> subscriptions,
            Map<Uuid, Integer> partitionCounts, Map<String, Set<PartitionKey>> current) {
        Map<String, TreeSet<PartitionKey>> result = new TreeMap<>();
        subscriptions.keySet().forEach(m -> result.put(m, new TreeSet<>()));
        Map<Uuid, List<String>> eligible = new HashMap<>();
        subscriptions.forEach((m, topics) -> topics.forEach(
                t -> eligible.computeIfAbsent(t, x -> new ArrayList<>()).add(m)));

        // Keep what each remaining member has and may still have.
        Set<PartitionKey> taken = new TreeSet<>();
        current.forEach((m, partitions) -> {
            TreeSet<PartitionKey> mine = result.get(m);
            if (mine == null) {
                return;
            }
            for (PartitionKey p : partitions) {
                Integer count = partitionCounts.get(p.topicId());
                if (count != null && p.partition() < count && subscriptions.get(m).contains(p.topicId())
                        && taken.add(p)) {
                    mine.add(p);
                }
            }
        });

        // The rest, the most constrained first.
        List<PartitionKey> free = new ArrayList<>();
        new TreeMap<>(partitionCounts).forEach((topic, count) -> {
            if (eligible.containsKey(topic)) {
                for (int p = 0; p < count; p++) {
                    PartitionKey key = new PartitionKey(topic, p);
                    if (!taken.contains(key)) {
                        free.add(key);
                    }
                }
            }
        });
        free.sort(Comparator.<PartitionKey>comparingInt(p -> eligible.get(p.topicId()).size())
                .thenComparing(Comparator.naturalOrder()));
        for (PartitionKey p : free) {
            result.get(smallest(eligible.get(p.topicId()), result, Integer.MAX_VALUE)).add(p);
        }

        balance(result, eligible);
        Map<String, Set<PartitionKey>> out = new TreeMap<>();
        result.forEach((m, partitions) -> out.put(m, Set.copyOf(partitions)));
        return out;
    }

    /**
     * Moves single partitions from larger members to eligible ones with at least two fewer. Each
     * move lowers the sum of squared sizes, so the loop ends; the bound is a guard only.
     */
    private static void balance(Map<String, TreeSet<PartitionKey>> result, Map<Uuid, List<String>> eligible) {
        int total = 0;
        for (TreeSet<PartitionKey> s : result.values()) {
            total += s.size();
        }
        long guard = (long) total * total + result.size() + 1;
        boolean moved = true;
        while (moved && guard-- > 0) {
            moved = false;
            List<String> bySizeDesc = new ArrayList<>(result.keySet());
            bySizeDesc.sort(Comparator.<String>comparingInt(m -> -result.get(m).size())
                    .thenComparing(Comparator.naturalOrder()));
            outer:
            for (String from : bySizeDesc) {
                TreeSet<PartitionKey> fromSet = result.get(from);
                // The highest partitions move first, so the low ones stay put across rebalances.
                for (PartitionKey p : fromSet.descendingSet()) {
                    String to = smallest(eligible.get(p.topicId()), result, fromSet.size() - 1);
                    if (to != null) {
                        fromSet.remove(p);
                        result.get(to).add(p);
                        moved = true;
                        break outer;
                    }
                }
            }
        }
    }

    /** The candidate with the fewest partitions, if it has fewer than {@code below}; else null. */
    private static String smallest(List<String> candidates, Map<String, TreeSet<PartitionKey>> result, int below) {
        String best = null;
        int bestSize = below;
        for (String m : candidates) {
            int size = result.get(m).size();
            if (size < bestSize) {
                best = m;
                bestSize = size;
            }
        }
        return best;
    }
}
