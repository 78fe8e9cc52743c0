package io.pier.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.PartitionKey;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

class UniformAssignorTest {
    private final Uuid a = Uuid.randomUuid();
    private final Uuid b = Uuid.randomUuid();
    private final UniformAssignor assignor = new UniformAssignor();

    private static SortedMap<String, Set<Uuid>> subs(Object... memberThenTopics) {
        SortedMap<String, Set<Uuid>> m = new TreeMap<>();
        for (int i = 0; i < memberThenTopics.length; i += 2) {
            m.put((String) memberThenTopics[i], (Set<Uuid>) memberThenTopics[i + 1]);
        }
        return m;
    }

    private static void assertEachPartitionOnce(Map<String, Set<PartitionKey>> result, Map<Uuid, Integer> counts) {
        Set<PartitionKey> seen = new HashSet<>();
        int total = 0;
        for (Set<PartitionKey> ps : result.values()) {
            seen.addAll(ps);
            total += ps.size();
        }
        int expected = counts.values().stream().mapToInt(Integer::intValue).sum();
        assertThat(seen).hasSize(expected);
        assertThat(total).isEqualTo(expected);
    }

    @Test
    void shouldBalanceEqualSubscriptionsWithinOne() {
        Map<Uuid, Integer> counts = Map.of(a, 7, b, 3);
        Map<String, Set<PartitionKey>> r = assignor.assign(subs("m1", Set.of(a, b), "m2", Set.of(a, b),
                "m3", Set.of(a, b)), counts, Map.of());
        assertEachPartitionOnce(r, counts);
        assertThat(r.values()).extracting(Set::size).containsExactlyInAnyOrder(4, 3, 3);
    }

    @Test
    void shouldMoveOnlyWhatANewMemberNeeds() {
        Map<Uuid, Integer> counts = Map.of(a, 6);
        Map<String, Set<PartitionKey>> first = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a), "m3",
                Set.of(a)), counts, Map.of());
        Map<String, Set<PartitionKey>> second = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a), "m3",
                Set.of(a), "m4", Set.of(a)), counts, first);

        assertEachPartitionOnce(second, counts);
        assertThat(second.values()).extracting(Set::size).containsExactlyInAnyOrder(2, 2, 1, 1);
        int kept = 0;
        for (String m : first.keySet()) {
            assertThat(first.get(m)).containsAll(second.get(m)); // nobody gains from another old member
            kept += second.get(m).size();
        }
        assertThat(kept).isEqualTo(5); // one partition moved, to the new member
        assertThat(second.get("m4")).hasSize(1);
    }

    @Test
    void shouldGiveTheLeavingMembersPartitionsToTheRest() {
        Map<Uuid, Integer> counts = Map.of(a, 6);
        Map<String, Set<PartitionKey>> first = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a), "m3",
                Set.of(a)), counts, Map.of());
        Map<String, Set<PartitionKey>> second = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a)), counts, first);

        assertEachPartitionOnce(second, counts);
        assertThat(second.get("m1")).containsAll(first.get("m1")).hasSize(3);
        assertThat(second.get("m2")).containsAll(first.get("m2")).hasSize(3);
    }

    @Test
    void shouldRespectDifferentSubscriptions() {
        Map<Uuid, Integer> counts = Map.of(a, 4, b, 4);
        Map<String, Set<PartitionKey>> r = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a, b), "m3",
                Set.of(b)), counts, Map.of());
        assertEachPartitionOnce(r, counts);
        assertThat(r.get("m1")).allSatisfy(p -> assertThat(p.topicId()).isEqualTo(a));
        assertThat(r.get("m3")).allSatisfy(p -> assertThat(p.topicId()).isEqualTo(b));
        assertThat(r.values()).extracting(Set::size).allSatisfy(n -> assertThat(n).isBetween(2, 3));
    }

    @Test
    void shouldDropPartitionsOfUnsubscribedOrShrunkTopics() {
        Map<String, Set<PartitionKey>> current = new HashMap<>();
        current.put("m1", Set.of(new PartitionKey(a, 0), new PartitionKey(a, 5), new PartitionKey(b, 0)));
        Map<String, Set<PartitionKey>> r = assignor.assign(subs("m1", Set.of(a)), Map.of(a, 2), current);
        assertThat(r.get("m1")).containsExactlyInAnyOrder(new PartitionKey(a, 0), new PartitionKey(a, 1));
    }

    @Test
    void shouldGiveEveryMemberAnEntryEvenWithNothingToAssign() {
        Map<String, Set<PartitionKey>> r = assignor.assign(subs("m1", Set.of(a), "m2", Set.of(a)), Map.of(a, 1),
                Map.of());
        assertThat(r).containsOnlyKeys("m1", "m2");
        assertThat(r.values()).extracting(Set::size).containsExactlyInAnyOrder(1, 0);
    }
}
