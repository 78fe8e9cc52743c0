package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
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

    @Test
    void shouldListARestartedNodeOnceAndSplitAmongItsNewestMemberOnly() {
        String topic = "__pier_share_state";
        StatePartitionAssignor.NodeAddress one = new StatePartitionAssignor.NodeAddress(1, "127.0.0.1", 9092);
        StatePartitionAssignor.NodeAddress two = new StatePartitionAssignor.NodeAddress(2, "127.0.0.1", 9093);
        StatePartitionAssignor first = new StatePartitionAssignor(topic, one, 100, o -> { });
        StatePartitionAssignor oldTwo = new StatePartitionAssignor(topic, two, 100, o -> { });
        StatePartitionAssignor newTwo = new StatePartitionAssignor(topic, two, 200, o -> { });
        Node broker = new Node(0, "127.0.0.1", 9000);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            partitions.add(new PartitionInfo(topic, p, broker, new Node[] {broker}, new Node[] {broker}));
        }
        Cluster cluster = new Cluster("c", List.of(broker), partitions, Set.of(), Set.of());
        // the old member of node 2 (killed, not dropped by the group yet) still owns 2 and 3
        Map<String, ConsumerPartitionAssignor.Subscription> members = Map.of(
                "m-1", subscription(first, topic, List.of(0, 1)),
                "m-2-old", subscription(oldTwo, topic, List.of(2, 3)),
                "m-2-new", subscription(newTwo, topic, List.of()));

        Map<String, ConsumerPartitionAssignor.Assignment> out = first.assign(cluster,
                new ConsumerPartitionAssignor.GroupSubscription(members)).groupAssignment();

        assertThat(out).containsOnlyKeys("m-1", "m-2-old", "m-2-new");
        assertThat(out.get("m-2-old").partitions()).isEmpty();
        assertThat(out.get("m-1").partitions()).extracting(TopicPartition::partition).containsExactly(0, 1);
        assertThat(out.get("m-2-new").partitions()).extracting(TopicPartition::partition).containsExactly(2, 3);
        StatePartitionAssignor.Ownership map = StatePartitionAssignor.Ownership.decode(out.get("m-1").userData());
        assertThat(map.nodes()).containsExactly(one, two);
        assertThat(map.memberIds()).containsEntry(2, "m-2-new");
    }

    private static ConsumerPartitionAssignor.Subscription subscription(StatePartitionAssignor assignor, String topic,
            List<Integer> owned) {
        List<TopicPartition> tps = new ArrayList<>();
        owned.forEach(p -> tps.add(new TopicPartition(topic, p)));
        return new ConsumerPartitionAssignor.Subscription(List.of(topic), assignor.subscriptionUserData(Set.of(topic)),
                tps);
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
