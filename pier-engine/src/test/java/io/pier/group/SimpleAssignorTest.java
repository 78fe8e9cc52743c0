package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.IntSummaryStatistics;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

class SimpleAssignorTest {

    private final SimpleAssignor assignor = new SimpleAssignor();
    private final Uuid t1 = Uuid.randomUuid();
    private final Uuid t2 = Uuid.randomUuid();

    @Test
    void shouldGiveEachOf100MembersOneOf10Partitions() {
        Map<String, Set<PartitionKey>> result = assign(members(100, Set.of(t1)), Map.of(t1, 10), Map.of());

        assertThat(result).hasSize(100);
        assertThat(result.values()).allSatisfy(p -> assertThat(p).hasSize(1));
        assertThat(ownerCounts(result)).hasSize(10).allSatisfy((p, owners) -> assertThat(owners).isEqualTo(10));
    }

    @Test
    void shouldLetEightMembersShareOnePartition() {
        Map<String, Set<PartitionKey>> result = assign(members(8, Set.of(t1)), Map.of(t1, 1), Map.of());

        assertThat(result.values()).allSatisfy(p -> assertThat(p).containsExactly(new PartitionKey(t1, 0)));
    }

    @Test
    void shouldSplitPartitionsWithoutSharingWhenPartitionsOutnumberMembers() {
        Map<String, Set<PartitionKey>> result = assign(members(3, Set.of(t1, t2)), Map.of(t1, 4, t2, 6), Map.of());

        assertBalanced(result);
        assertThat(ownerCounts(result)).hasSize(10).allSatisfy((p, owners) -> assertThat(owners).isEqualTo(1));
    }

    @Test
    void shouldStayBalancedForRandomHomogeneousGroups() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        Map<String, Set<PartitionKey>> previous = Map.of();
        for (int round = 0; round < 50; round++) {
            int memberCount = 1 + random.nextInt(40);
            int partitions = 1 + random.nextInt(30);
            Map<String, Set<PartitionKey>> result =
                    assign(members(memberCount, Set.of(t1)), Map.of(t1, partitions), previous);

            int sharing = (memberCount + partitions - 1) / partitions;
            assertThat(result.values()).as("seed %d", seed).allSatisfy(p -> assertThat(p).isNotEmpty());
            assertThat(loadSpread(result)).as("seed %d", seed).isLessThanOrEqualTo(1);
            assertThat(ownerCounts(result)).as("seed %d", seed).hasSize(partitions)
                    .allSatisfy((p, owners) -> assertThat(owners).isEqualTo(sharing));
            previous = result;
        }
    }

    @Test
    void shouldKeepPartitionsWhenAMemberJoins() {
        Map<String, Set<PartitionKey>> before = assign(members(3, Set.of(t1)), Map.of(t1, 6), Map.of());

        Map<String, Set<PartitionKey>> after = assign(members(4, Set.of(t1)), Map.of(t1, 6), before);

        int kept = 0;
        for (String member : before.keySet()) {
            Set<PartitionKey> still = new HashSet<>(before.get(member));
            still.retainAll(after.get(member));
            kept += still.size();
        }
        assertThat(kept).isEqualTo(5);
        assertBalanced(after);
    }

    @Test
    void shouldOnlyAssignSubscribedTopicsForMixedSubscriptions() {
        SortedMap<String, Set<Uuid>> subs = new TreeMap<>();
        subs.put("a", Set.of(t1));
        subs.put("b", Set.of(t1, t2));
        subs.put("c", Set.of(t2));

        Map<String, Set<PartitionKey>> result = assign(subs, Map.of(t1, 1, t2, 3), Map.of());

        assertThat(result.get("a")).containsExactly(new PartitionKey(t1, 0));
        assertThat(result.get("c")).isNotEmpty().allSatisfy(p -> assertThat(p.topicId()).isEqualTo(t2));
        assertThat(result.get("b")).isNotEmpty();
        assertThat(ownerCounts(result)).hasSize(4);
    }

    @Test
    void shouldGiveNothingToMemberWhoseTopicsDoNotExist() {
        SortedMap<String, Set<Uuid>> subs = new TreeMap<>();
        subs.put("a", Set.of(t1));
        subs.put("b", Set.of());

        Map<String, Set<PartitionKey>> result = assign(subs, Map.of(t1, 2), Map.of());

        assertThat(result.get("a")).hasSize(2);
        assertThat(result.get("b")).isEmpty();
    }

    private Map<String, Set<PartitionKey>> assign(
            SortedMap<String, Set<Uuid>> subs, Map<Uuid, Integer> counts, Map<String, Set<PartitionKey>> current) {
        return assignor.assign(subs, counts, current);
    }

    private static SortedMap<String, Set<Uuid>> members(int count, Set<Uuid> topics) {
        SortedMap<String, Set<Uuid>> subs = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            subs.put(String.format("member-%03d", i), topics);
        }
        return subs;
    }

    private static Map<PartitionKey, Integer> ownerCounts(Map<String, Set<PartitionKey>> result) {
        Map<PartitionKey, Integer> owners = new HashMap<>();
        result.values().forEach(ps -> ps.forEach(p -> owners.merge(p, 1, Integer::sum)));
        return owners;
    }

    private static void assertBalanced(Map<String, Set<PartitionKey>> result) {
        assertThat(loadSpread(result)).as("loads %s", result).isLessThanOrEqualTo(1);
    }

    private static int loadSpread(Map<String, Set<PartitionKey>> result) {
        IntSummaryStatistics loads = result.values().stream().mapToInt(Set::size).summaryStatistics();
        return loads.getMax() - loads.getMin();
    }
}
