package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The cooperative sticky split of state partitions among gateway nodes. */
class StatePartitionAssignorTest {

    @Test
    void shouldSplitEvenlyAmongNewMembers() {
        Map<String, List<Integer>> plan = StatePartitionAssignor.plan(8, Map.of("a", List.of(), "b", List.of(),
                "c", List.of()));
        assertThat(plan.values()).extracting(List::size).containsExactlyInAnyOrder(3, 3, 2);
        assertThat(all(plan)).containsExactlyInAnyOrderElementsOf(range(8));
    }

    @Test
    void shouldKeepWhatMembersOwnAndGiveAPartitionAwayOnlyAfterItsOwnerLetItGo() {
        // Given a owns everything and b joins
        Map<String, List<Integer>> owned = Map.of("a", range(8), "b", List.of());

        // When the first rebalance plans: a keeps its quota, b gets nothing yet (a still holds the rest)
        Map<String, List<Integer>> first = StatePartitionAssignor.plan(8, owned);
        assertThat(first.get("a")).hasSize(4).isSubsetOf(range(8));
        assertThat(first.get("b")).isEmpty();

        // Then the follow-up rebalance gives b what a let go
        Map<String, List<Integer>> second = StatePartitionAssignor.plan(8, first);
        assertThat(second.get("a")).isEqualTo(first.get("a"));
        assertThat(second.get("b")).hasSize(4).doesNotContainAnyElementsOf(first.get("a"));
    }

    @Test
    void shouldHandOutTheLeavingMembersPartitionsAtOnce() {
        Map<String, List<Integer>> plan = StatePartitionAssignor.plan(9, Map.of("a", List.of(0, 1, 2),
                "b", List.of(3, 4, 5)));
        assertThat(plan.get("a")).containsExactly(0, 1, 2, 6, 7);
        assertThat(plan.get("b")).containsExactly(3, 4, 5, 8);
    }

    @Test
    void shouldNeverGiveOnePartitionToTwoMembersAndConvergeUnderRandomMembershipChanges() {
        Random random = new Random(42);
        Map<String, List<Integer>> owned = new HashMap<>();
        for (int round = 0; round < 500; round++) {
            // a member joins or leaves now and then
            if (owned.isEmpty() || random.nextInt(4) == 0) {
                owned.put("m" + random.nextInt(6), List.of());
            } else if (random.nextInt(5) == 0 && owned.size() > 1) {
                owned.remove(new ArrayList<>(owned.keySet()).get(random.nextInt(owned.size())));
            }
            Map<String, List<Integer>> plan = StatePartitionAssignor.plan(16, owned);
            Set<Integer> seen = new HashSet<>();
            plan.values().forEach(ps -> ps.forEach(p -> assertThat(seen.add(p)).as("partition %d twice", p).isTrue()));
            // a partition goes only to its owner or to a member when no one owned it
            Set<Integer> ownedBefore = new HashSet<>();
            owned.values().forEach(ownedBefore::addAll);
            plan.forEach((id, ps) -> ps.forEach(p -> assertThat(owned.get(id).contains(p) || !ownedBefore.contains(p))
                    .as("%s given %d still owned by another", id, p).isTrue()));
            owned.clear();
            owned.putAll(plan);
        }
        // with no more changes, two rounds reach the even split of every partition
        Map<String, List<Integer>> settled = StatePartitionAssignor.plan(16,
                StatePartitionAssignor.plan(16, owned));
        assertThat(all(settled)).containsExactlyInAnyOrderElementsOf(range(16));
        int min = settled.values().stream().mapToInt(List::size).min().orElseThrow();
        int max = settled.values().stream().mapToInt(List::size).max().orElseThrow();
        assertThat(max - min).isLessThanOrEqualTo(1);
    }

    @Test
    void shouldCarryTheWholeMapInEveryAssignment() {
        StatePartitionAssignor.Ownership o = new StatePartitionAssignor.Ownership(Map.of(0,
                new StatePartitionAssignor.NodeAddress(7, "127.0.0.1", 9092), 1,
                new StatePartitionAssignor.NodeAddress(8, "127.0.0.1", 9093)), List.of(
                new StatePartitionAssignor.NodeAddress(7, "127.0.0.1", 9092),
                new StatePartitionAssignor.NodeAddress(8, "127.0.0.1", 9093)));
        assertThat(StatePartitionAssignor.Ownership.decode(o.encode())).isEqualTo(o);
        StatePartitionAssignor.Ownership withMembers = new StatePartitionAssignor.Ownership(o.owners(), o.nodes(),
                Map.of(7, "pier-gateway-7-5f1c", 8, "pier-gateway-8-0a2e"));
        assertThat(StatePartitionAssignor.Ownership.decode(withMembers.encode())).isEqualTo(withMembers);
    }

    private static List<Integer> range(int n) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }

    private static List<Integer> all(Map<String, List<Integer>> plan) {
        List<Integer> out = new ArrayList<>();
        plan.values().forEach(out::addAll);
        return out;
    }
}
