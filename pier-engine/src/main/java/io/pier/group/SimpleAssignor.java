package io.pier.group;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;

/**
 * Share groups' {@code simple} assignor: spreads the partitions of the subscribed topics over the
 * members, letting several members share a partition when members outnumber partitions.
 *
 * <p>Stateless; a pure function of its inputs, so it is safe from any thread. Properties of every
 * result:
 *
 * <ul>
 *   <li>a member only gets partitions of topics it subscribes to;
 *   <li>every partition of a subscribed topic has at least one member;
 *   <li>every member that subscribes to at least one partition gets at least one;
 *   <li>with identical subscriptions, each partition has {@code ceil(members / partitions)}
 *       members and member loads differ by at most one;
 *   <li>a member keeps partitions it already had as long as that keeps the balance (sticky).
 * </ul>
 *
 * <p>Steps: compute each topic's desired sharing; keep previous assignments up to the desired
 * sharing and a per-member cap; give each partition still short of sharing to the least-loaded
 * subscriber; move partitions from heavy to light members until no two loads differ by two or
 * more; give a shared partition to any member still without one; balance again. Mixed
 * subscriptions use the same steps, with a topic's desired sharing computed from its own
 * subscribers and the partitions they can reach.
 */
final class SimpleAssignor {

    static final String NAME = "simple";

    /**
     * @param subscriptions member id to the ids of the existing topics it subscribes to
     * @param partitionCounts topic id to partition count, for every topic in {@code subscriptions}
     * @param current the previous target assignment, for stickiness (may hold stale members,
     *     topics or partitions, which are ignored)
     * @return member id to its partitions, with an entry (maybe empty) for every member
     */
    Map<String, Set<PartitionKey>> assign(
            SortedMap<String, Set<Uuid>> subscriptions,
            Map<Uuid, Integer> partitionCounts,
            Map<String, Set<PartitionKey>> current) {
        Run run = new Run(subscriptions, partitionCounts, current);
        run.keepPrevious();
        run.fillToSharing();
        run.balance();
        run.coverIdleMembers();
        run.balance();
        Map<String, Set<PartitionKey>> result = new TreeMap<>();
        run.assigned.forEach((member, partitions) -> result.put(member, Set.copyOf(partitions)));
        return result;
    }

    /** The working state of one assignment computation. */
    private static final class Run {
        private final SortedMap<String, Set<Uuid>> subscriptions;
        private final Map<String, Set<PartitionKey>> current;
        private final TreeMap<String, TreeSet<PartitionKey>> assigned = new TreeMap<>();
        private final TreeMap<PartitionKey, Integer> owners = new TreeMap<>();
        private final Map<Uuid, Integer> sharing = new HashMap<>();
        private final Map<Uuid, List<String>> subscribers = new TreeMap<>();
        private final Map<String, Integer> reach = new HashMap<>();
        private final Map<Uuid, Integer> partitionCounts;
        private final int memberCap;

        Run(SortedMap<String, Set<Uuid>> subscriptions, Map<Uuid, Integer> partitionCounts,
                Map<String, Set<PartitionKey>> current) {
            this.subscriptions = subscriptions;
            this.partitionCounts = partitionCounts;
            this.current = current;
            for (Map.Entry<String, Set<Uuid>> entry : subscriptions.entrySet()) {
                assigned.put(entry.getKey(), new TreeSet<>());
                int memberReach = 0;
                for (Uuid topic : entry.getValue()) {
                    int count = partitionCounts.getOrDefault(topic, 0);
                    if (count > 0) {
                        subscribers.computeIfAbsent(topic, t -> new ArrayList<>()).add(entry.getKey());
                        memberReach += count;
                    }
                }
                reach.put(entry.getKey(), memberReach);
            }
            long slots = 0;
            int activeMembers = 0;
            for (Map.Entry<Uuid, List<String>> entry : subscribers.entrySet()) {
                Set<Uuid> reachable = new HashSet<>();
                for (String member : entry.getValue()) {
                    reachable.addAll(subscriptions.get(member));
                }
                int reachablePartitions = 0;
                for (Uuid topic : reachable) {
                    reachablePartitions += partitionCounts.getOrDefault(topic, 0);
                }
                int desired = ceilDiv(entry.getValue().size(), reachablePartitions);
                sharing.put(entry.getKey(), desired);
                int count = partitionCounts.get(entry.getKey());
                slots += (long) desired * count;
                for (int p = 0; p < count; p++) {
                    owners.put(new PartitionKey(entry.getKey(), p), 0);
                }
            }
            for (int r : reach.values()) {
                if (r > 0) {
                    activeMembers++;
                }
            }
            memberCap = activeMembers == 0 ? 0 : (int) ((slots + activeMembers - 1) / activeMembers);
        }

        void keepPrevious() {
            for (Map.Entry<String, TreeSet<PartitionKey>> entry : assigned.entrySet()) {
                Set<PartitionKey> previous = current.getOrDefault(entry.getKey(), Set.of());
                for (PartitionKey partition : new TreeSet<>(previous)) {
                    if (entry.getValue().size() >= memberCap) {
                        break;
                    }
                    Integer owned = owners.get(partition);
                    if (owned != null
                            && owned < sharing.get(partition.topicId())
                            && eligible(entry.getKey(), partition)) {
                        add(entry.getKey(), partition);
                    }
                }
            }
        }

        void fillToSharing() {
            List<PartitionKey> order = new ArrayList<>(owners.keySet());
            order.sort(Comparator.comparingInt((PartitionKey p) -> subscribers.get(p.topicId()).size())
                    .thenComparing(p -> p));
            for (PartitionKey partition : order) {
                int desired = sharing.get(partition.topicId());
                while (owners.get(partition) < desired) {
                    String member = leastLoaded(partition);
                    if (member == null) {
                        break;
                    }
                    add(member, partition);
                }
            }
        }

        /** Moves partitions from heavier to lighter members; each move lowers the sum of squared loads, so this ends. */
        void balance() {
            boolean moved = true;
            while (moved) {
                moved = false;
                List<String> byLoad = new ArrayList<>(assigned.keySet());
                byLoad.sort(Comparator.comparingInt((String m) -> assigned.get(m).size())
                        .thenComparing(m -> m));
                outer:
                for (int h = byLoad.size() - 1; h >= 0; h--) {
                    String heavy = byLoad.get(h);
                    for (int l = 0; l < h; l++) {
                        String light = byLoad.get(l);
                        if (assigned.get(heavy).size() - assigned.get(light).size() < 2) {
                            break;
                        }
                        PartitionKey partition = movable(heavy, light);
                        if (partition != null) {
                            assigned.get(heavy).remove(partition);
                            assigned.get(light).add(partition);
                            moved = true;
                            break outer;
                        }
                    }
                }
            }
        }

        /** Members that could subscribe to something but got nothing share the least-shared partition. */
        void coverIdleMembers() {
            for (Map.Entry<String, TreeSet<PartitionKey>> entry : assigned.entrySet()) {
                if (!entry.getValue().isEmpty() || reach.get(entry.getKey()) == 0) {
                    continue;
                }
                PartitionKey best = null;
                for (Uuid topic : subscriptions.get(entry.getKey())) {
                    int count = partitionCounts.getOrDefault(topic, 0);
                    for (int p = 0; p < count; p++) {
                        PartitionKey candidate = new PartitionKey(topic, p);
                        if (best == null
                                || owners.get(candidate) < owners.get(best)
                                || (owners.get(candidate).equals(owners.get(best))
                                        && candidate.compareTo(best) < 0)) {
                            best = candidate;
                        }
                    }
                }
                add(entry.getKey(), best);
            }
        }

        private PartitionKey movable(String heavy, String light) {
            PartitionKey fallback = null;
            Set<PartitionKey> lightPrevious = current.getOrDefault(light, Set.of());
            for (PartitionKey partition : assigned.get(heavy)) {
                if (!assigned.get(light).contains(partition) && eligible(light, partition)) {
                    if (lightPrevious.contains(partition)) {
                        return partition;
                    }
                    if (fallback == null) {
                        fallback = partition;
                    }
                }
            }
            return fallback;
        }

        private String leastLoaded(PartitionKey partition) {
            String best = null;
            for (String member : subscribers.get(partition.topicId())) {
                if (assigned.get(member).contains(partition)) {
                    continue;
                }
                if (best == null || lighter(member, best)) {
                    best = member;
                }
            }
            return best;
        }

        /** Lower load first; then the member with fewer reachable partitions (less choice); then id. */
        private boolean lighter(String a, String b) {
            int loadA = assigned.get(a).size();
            int loadB = assigned.get(b).size();
            if (loadA != loadB) {
                return loadA < loadB;
            }
            int reachA = reach.get(a);
            int reachB = reach.get(b);
            if (reachA != reachB) {
                return reachA < reachB;
            }
            return a.compareTo(b) < 0;
        }

        private boolean eligible(String member, PartitionKey partition) {
            return subscriptions.get(member).contains(partition.topicId())
                    && owners.containsKey(partition);
        }

        private void add(String member, PartitionKey partition) {
            assigned.get(member).add(partition);
            owners.merge(partition, 1, Integer::sum);
        }

        private static int ceilDiv(int a, int b) {
            return Math.max(1, (a + b - 1) / b);
        }
    }
}
