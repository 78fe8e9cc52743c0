package io.pier.group;

import java.util.Collection;
import java.util.HashMap;
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
 * The membership of one share group: members, epochs and the target assignment. Owned by the
 * {@link ShareGroupCoordinator}'s thread; no locks.
 *
 * <p>Invariants: {@code assignmentEpoch == groupEpoch} between calls (the simple assignor runs
 * synchronously, so the target is always up to date); {@code targetAssignment} has exactly the
 * keys of {@code members}; the state is {@link ShareGroupState#STABLE} exactly when there are
 * members, until the group is deleted ({@link ShareGroupState#DEAD}).
 */
final class ShareGroup {
    private static final Logger LOG = LoggerFactory.getLogger(ShareGroup.class);

    final String groupId;
    private ShareGroupState state = ShareGroupState.EMPTY;
    private int groupEpoch;
    private int assignmentEpoch;
    private final TreeMap<String, ShareGroupMember> members = new TreeMap<>();
    private Map<String, Set<PartitionKey>> targetAssignment = new TreeMap<>();
    /** The subscribed topics as last resolved: id to partition count, and id to name. */
    private Map<Uuid, Integer> resolvedPartitionCounts = Map.of();
    private Map<Uuid, String> resolvedTopicNames = Map.of();

    ShareGroup(String groupId, int groupEpoch) {
        this.groupId = groupId;
        this.groupEpoch = groupEpoch;
        this.assignmentEpoch = groupEpoch;
    }

    ShareGroupState state() {
        return state;
    }

    int groupEpoch() {
        return groupEpoch;
    }

    int assignmentEpoch() {
        return assignmentEpoch;
    }

    Optional<ShareGroupMember> member(String memberId) {
        return Optional.ofNullable(members.get(memberId));
    }

    Collection<ShareGroupMember> members() {
        return members.values();
    }

    int size() {
        return members.size();
    }

    Set<PartitionKey> target(String memberId) {
        return targetAssignment.getOrDefault(memberId, Set.of());
    }

    /** The topic name for an id as last resolved, or null. */
    String topicName(Uuid topicId) {
        return resolvedTopicNames.get(topicId);
    }

    void addMember(ShareGroupMember member, TopicLookup topics) {
        members.put(member.memberId, member);
        state(ShareGroupState.STABLE);
        rebalance(topics, true);
    }

    void removeMember(String memberId, TopicLookup topics) {
        if (members.remove(memberId) == null) {
            return;
        }
        if (members.isEmpty()) {
            state(ShareGroupState.EMPTY);
        }
        rebalance(topics, true);
    }

    /** A member's subscription changed. */
    void onSubscriptionChanged(TopicLookup topics) {
        rebalance(topics, true);
    }

    /** Topic metadata may have changed; bumps the epoch only if the assignment inputs or result did. */
    void onTopicsChanged(TopicLookup topics) {
        rebalance(topics, false);
    }

    void markDead() {
        state(ShareGroupState.DEAD);
    }

    /**
     * Recomputes the target assignment. With {@code bump} the group epoch always moves (membership
     * or subscriptions changed); otherwise only when the resolved topics or the target changed.
     */
    private void rebalance(TopicLookup topics, boolean bump) {
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        SortedMap<String, Set<Uuid>> subscriptions = new TreeMap<>();
        for (ShareGroupMember member : members.values()) {
            Set<Uuid> ids = new TreeSet<>();
            for (String name : member.subscribedTopicNames) {
                topics.byName(name).ifPresent(topic -> {
                    ids.add(topic.id());
                    counts.put(topic.id(), topic.partitionCount());
                    names.put(topic.id(), topic.name());
                });
            }
            subscriptions.put(member.memberId, ids);
        }
        Map<String, Set<PartitionKey>> next =
                new SimpleAssignor().assign(subscriptions, counts, targetAssignment);
        boolean changed = !next.equals(targetAssignment) || !counts.equals(resolvedPartitionCounts);
        targetAssignment = next;
        resolvedPartitionCounts = Map.copyOf(counts);
        resolvedTopicNames = Map.copyOf(names);
        if (bump || changed) {
            groupEpoch++;
            assignmentEpoch = groupEpoch;
            LOG.debug("Share group {} now at epoch {} with {} members", groupId, groupEpoch, members.size());
        }
    }

    /** The single place where the state changes. */
    private void state(ShareGroupState next) {
        if (next == state) {
            return;
        }
        if (!state.canTransitionTo(next)) {
            throw new IllegalStateException(
                    "Share group " + groupId + " cannot move from " + state + " to " + next);
        }
        LOG.debug("Share group {} {} -> {}", groupId, state, next);
        state = next;
    }
}
