package io.pier.group.consumer;

import com.google.re2j.Pattern;
import io.pier.group.PartitionKey;
import io.pier.group.RebalanceCounter;
import io.pier.group.TopicInfo;
import io.pier.group.TopicLookup;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer-protocol group: members, the group and assignment epochs, the target assignment
 * and who holds which partition now. Owned by its {@link ConsumerGroupCoordinator}'s thread.
 *
 * <p>Invariants: {@code assignmentEpoch == groupEpoch} between calls (the assignors run
 * synchronously); {@code target} has exactly the keys of {@code members}; {@code owners} maps each
 * partition some member has in {@code assigned} or {@code pendingRevocation} to that one member,
 * so a partition is never given to a second member before the first reported it revoked.
 */
final class ConsumerGroup {
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerGroup.class);

    final String groupId;
    private int groupEpoch;
    private int assignmentEpoch;
    private boolean dead;
    private final TreeMap<String, ConsumerMember> members = new TreeMap<>();
    /** Instance id to member id, for static members. */
    private final Map<String, String> staticMembers = new HashMap<>();
    private Map<String, Set<PartitionKey>> target = new TreeMap<>();
    private final Map<PartitionKey, String> owners = new HashMap<>();
    private Map<Uuid, Integer> resolvedCounts = Map.of();
    private Map<Uuid, String> resolvedNames = Map.of();
    private String assignorName;
    /** The coordinator's count of epoch bumps, over all its groups. */
    private final RebalanceCounter rebalances;

    ConsumerGroup(String groupId, String defaultAssignor, RebalanceCounter rebalances) {
        this.groupId = groupId;
        this.assignorName = defaultAssignor;
        this.rebalances = rebalances;
    }

    int groupEpoch() {
        return groupEpoch;
    }

    int assignmentEpoch() {
        return assignmentEpoch;
    }

    String assignorName() {
        return assignorName;
    }

    Optional<ConsumerMember> member(String memberId) {
        return Optional.ofNullable(members.get(memberId));
    }

    Optional<ConsumerMember> staticMember(String instanceId) {
        String id = staticMembers.get(instanceId);
        return id == null ? Optional.empty() : member(id);
    }

    Collection<ConsumerMember> members() {
        return members.values();
    }

    int size() {
        return members.size();
    }

    Set<PartitionKey> target(String memberId) {
        return target.getOrDefault(memberId, Set.of());
    }

    /** The topic name for an id as last resolved, or null. */
    String topicName(Uuid topicId) {
        return resolvedNames.get(topicId);
    }

    /** Every topic name some member subscribes to as last resolved (offset deletion checks). */
    Collection<String> subscribedTopicNames() {
        return resolvedNames.values();
    }

    ConsumerGroupState state() {
        if (dead) {
            return ConsumerGroupState.DEAD;
        }
        if (members.isEmpty()) {
            return ConsumerGroupState.EMPTY;
        }
        if (groupEpoch > assignmentEpoch) {
            return ConsumerGroupState.ASSIGNING;
        }
        for (ConsumerMember m : members.values()) {
            if (m.memberEpoch != assignmentEpoch || m.state != MemberState.STABLE) {
                return ConsumerGroupState.RECONCILING;
            }
        }
        return ConsumerGroupState.STABLE;
    }

    void markDead() {
        dead = true;
    }

    void add(ConsumerMember member) {
        members.put(member.memberId, member);
        if (member.instanceId != null) {
            staticMembers.put(member.instanceId, member.memberId);
        }
    }

    /** Removes a member and frees what it held; the caller rebalances. */
    void remove(ConsumerMember member) {
        members.remove(member.memberId);
        if (member.instanceId != null && member.memberId.equals(staticMembers.get(member.instanceId))) {
            staticMembers.remove(member.instanceId);
        }
        release(member);
        target.remove(member.memberId);
    }

    /**
     * A static member comes back under a new member id: the new member takes over the old one's
     * partitions and target without a rebalance (KIP-848 static membership).
     */
    ConsumerMember replaceStatic(ConsumerMember old, String newMemberId) {
        ConsumerMember next = new ConsumerMember(newMemberId);
        next.instanceId = old.instanceId;
        next.rackId = old.rackId;
        next.rebalanceTimeoutMs = old.rebalanceTimeoutMs;
        next.serverAssignor = old.serverAssignor;
        next.subscribedTopicNames = old.subscribedTopicNames;
        next.subscribedTopicRegex = old.subscribedTopicRegex;
        next.assigned = old.assigned;
        next.pendingRevocation = old.pendingRevocation;
        next.assignedAt = old.assignedAt;
        next.state = old.state;
        members.remove(old.memberId);
        members.put(newMemberId, next);
        staticMembers.put(next.instanceId, newMemberId);
        for (PartitionKey p : next.assigned) {
            owners.put(p, newMemberId);
        }
        for (PartitionKey p : next.pendingRevocation) {
            owners.put(p, newMemberId);
        }
        Set<PartitionKey> t = target.remove(old.memberId);
        target.put(newMemberId, t == null ? Set.of() : t);
        return next;
    }

    /** A member taken over from a classic group keeps what it had, as its target too. */
    void adoptAssigned(ConsumerMember member, Set<PartitionKey> partitions) {
        Set<PartitionKey> free = new HashSet<>();
        for (PartitionKey p : partitions) {
            if (!owners.containsKey(p)) {
                free.add(p);
            }
        }
        hold(member, free, Set.of());
        target.put(member.memberId, Set.copyOf(free));
    }

    /** After a takeover from a classic group: the group is at that group's generation. */
    void adoptEpoch(int epoch) {
        groupEpoch = epoch;
        assignmentEpoch = epoch;
    }

    /** Whether a member still waits for partitions of its target that other members hold. */
    boolean waitsOnOthers(ConsumerMember member) {
        for (PartitionKey p : target(member.memberId)) {
            String owner = owners.get(p);
            if (!member.assigned.contains(p) && owner != null && !owner.equals(member.memberId)) {
                return true;
            }
        }
        return false;
    }

    /** Frees the partitions a member holds (it left, was fenced, or rejoined from scratch). */
    void release(ConsumerMember member) {
        unhold(member);
        member.assigned = Set.of();
        member.pendingRevocation = Set.of();
        member.assignedAt = Map.of();
        member.state = MemberState.STABLE;
        member.revocationDeadlineMs = Long.MAX_VALUE;
    }

    /**
     * Recomputes the target. With {@code bump} the group epoch always moves (membership or
     * subscriptions changed); otherwise only when the resolved topics or the target changed.
     */
    void rebalance(TopicLookup topics, String defaultAssignor, boolean bump) {
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        SortedMap<String, Set<Uuid>> subscriptions = new TreeMap<>();
        Map<String, Pattern> patterns = new HashMap<>();
        for (ConsumerMember member : members.values()) {
            Set<Uuid> ids = new TreeSet<>();
            for (String name : member.subscribedTopicNames) {
                topics.byName(name).ifPresent(t -> resolve(t, ids, counts, names));
            }
            if (member.subscribedTopicRegex != null) {
                Pattern p = patterns.computeIfAbsent(member.subscribedTopicRegex, Pattern::compile);
                for (TopicInfo t : topics.all()) {
                    if (p.matches(t.name())) {
                        resolve(t, ids, counts, names);
                    }
                }
            }
            subscriptions.put(member.memberId, ids);
        }
        assignorName = chooseAssignor(defaultAssignor);
        Map<String, Set<PartitionKey>> next =
                PartitionAssignor.byName(assignorName).assign(subscriptions, counts, target);
        boolean changed = !next.equals(target) || !counts.equals(resolvedCounts);
        target = new TreeMap<>(next);
        resolvedCounts = Map.copyOf(counts);
        resolvedNames = Map.copyOf(names);
        if (bump || changed) {
            groupEpoch++;
            assignmentEpoch = groupEpoch;
            rebalances.increment();
            LOG.debug("Consumer group {} now at epoch {} with {} members", groupId, groupEpoch, members.size());
        }
    }

    private static void resolve(TopicInfo t, Set<Uuid> ids, Map<Uuid, Integer> counts, Map<Uuid, String> names) {
        ids.add(t.id());
        counts.put(t.id(), t.partitionCount());
        names.put(t.id(), t.name());
    }

    /** The assignor most members ask for (ties: the smaller name), else the broker's default. */
    private String chooseAssignor(String defaultAssignor) {
        Map<String, Integer> votes = new TreeMap<>();
        for (ConsumerMember m : members.values()) {
            if (m.serverAssignor != null) {
                votes.merge(m.serverAssignor, 1, Integer::sum);
            }
        }
        String best = defaultAssignor;
        int bestVotes = 0;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (e.getValue() > bestVotes) {
                best = e.getKey();
                bestVotes = e.getValue();
            }
        }
        return best;
    }

    /**
     * The one transition of a member's reconciliation (KIP-848): moves {@code member} towards its
     * target as far as it may go now. {@code owned} is what the member reported owning (null:
     * not reported). Partitions to give up are first asked back (UNREVOKED_PARTITIONS, epoch
     * kept); partitions another member still holds wait (UNRELEASED_PARTITIONS); otherwise the
     * member reaches the target at the assignment epoch. Returns whether {@code assigned} changed.
     */
    boolean reconcile(ConsumerMember member, Set<PartitionKey> owned) {
        Set<PartitionKey> before = member.assigned;
        switch (member.state) {
            case STABLE -> {
                if (member.memberEpoch != assignmentEpoch) {
                    next(member, member.memberEpoch, owned);
                }
            }
            case UNREVOKED_PARTITIONS -> {
                if (!ownsAny(owned, member.pendingRevocation)) {
                    next(member, member.memberEpoch + 1, owned);
                }
            }
            case UNRELEASED_PARTITIONS -> next(member, member.memberEpoch, owned);
        }
        return !before.equals(member.assigned);
    }

    private void next(ConsumerMember member, int epochIfRevoking, Set<PartitionKey> owned) {
        Set<PartitionKey> goal = target(member.memberId);
        Set<PartitionKey> keep = new HashSet<>(member.assigned);
        keep.retainAll(goal);
        Set<PartitionKey> revoke = new HashSet<>(member.assigned);
        revoke.removeAll(keep);
        revoke.addAll(member.pendingRevocation); // still held until reported gone
        revoke.removeAll(goal);
        Set<PartitionKey> add = new HashSet<>(goal);
        add.removeAll(keep);
        boolean unreleased = add.removeIf(p -> {
            String owner = owners.get(p);
            return owner != null && !owner.equals(member.memberId);
        });
        unhold(member);
        if (!revoke.isEmpty() && ownsAny(owned, revoke)) {
            member.state = MemberState.UNREVOKED_PARTITIONS;
            member.updateEpoch(epochIfRevoking);
            hold(member, keep, revoke);
            return;
        }
        keep.addAll(add);
        member.state = unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE;
        member.updateEpoch(assignmentEpoch);
        hold(member, keep, Set.of());
    }

    private void unhold(ConsumerMember member) {
        for (PartitionKey p : member.assigned) {
            owners.remove(p, member.memberId);
        }
        for (PartitionKey p : member.pendingRevocation) {
            owners.remove(p, member.memberId);
        }
    }

    /**
     * Records what a member holds now. A partition it already had keeps the epoch it was assigned
     * at; a new one is assigned at the member's current epoch (KIP-1251: commits from any epoch
     * since then are the member's own).
     */
    private void hold(ConsumerMember member, Set<PartitionKey> assigned, Set<PartitionKey> pending) {
        Map<PartitionKey, Integer> since = new HashMap<>();
        for (Set<PartitionKey> ps : List.of(assigned, pending)) {
            for (PartitionKey p : ps) {
                since.put(p, member.assignedAt.getOrDefault(p, Math.max(member.memberEpoch, 0)));
            }
        }
        member.assignedAt = Map.copyOf(since);
        member.assigned = Set.copyOf(assigned);
        member.pendingRevocation = Set.copyOf(pending);
        for (PartitionKey p : assigned) {
            owners.put(p, member.memberId);
        }
        for (PartitionKey p : pending) {
            owners.put(p, member.memberId);
        }
    }

    /** Whether the reported partitions include any of {@code partitions}; not reporting counts as owning. */
    private static boolean ownsAny(Set<PartitionKey> owned, Set<PartitionKey> partitions) {
        if (owned == null) {
            return true;
        }
        for (PartitionKey p : partitions) {
            if (owned.contains(p)) {
                return true;
            }
        }
        return false;
    }
}
