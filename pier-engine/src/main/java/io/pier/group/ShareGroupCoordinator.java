package io.pier.group;

import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The share-group membership coordinator: every share group of this broker, their members, target
 * assignments ({@link SimpleAssignor}), session timers and group configs.
 *
 * <p>Single owner: all methods are called from one thread (the shard that owns these group ids);
 * no locks, no threads of its own. Time comes only from the {@code nowMs} arguments (monotonic
 * milliseconds).
 *
 * <p>Invariants: a member's session deadline is in {@code deadlines} exactly while the member
 * exists; group configs are stored per group id and may exist for ids with no group; a group is
 * created by a member's first join (epoch 0) or by a snapshot, and leaves only through {@link
 * #deleteGroup}. Joins move a member straight to its target assignment (no revocation phase), and
 * every join, leave, subscription change or effective topic change bumps the group epoch; each
 * member picks up its new target on its next heartbeat.
 */
public final class ShareGroupCoordinator {

    private static final int MAX_MEMBER_ID_LENGTH = 36;

    private final ShareGroupBrokerConfig broker;
    private final ConsumerGroupBrokerConfig consumerBroker;
    private final TopicLookup topics;
    private final TreeMap<String, ShareGroup> groups = new TreeMap<>();
    private final TreeMap<String, GroupConfig> configs = new TreeMap<>();
    private final TreeSet<SessionDeadline> deadlines = new TreeSet<>();
    private long changeCount;

    public ShareGroupCoordinator(ShareGroupBrokerConfig broker, TopicLookup topics) {
        this(broker, topics, ShareGroupsSnapshot.EMPTY);
    }

    public ShareGroupCoordinator(
            ShareGroupBrokerConfig broker, TopicLookup topics, ShareGroupsSnapshot snapshot) {
        this(broker, ConsumerGroupBrokerConfig.DEFAULTS, topics, snapshot);
    }

    /**
     * Restores group ids, epochs and configs from a snapshot; every restored group is Empty. The
     * configs of a group id include its {@code consumer.*} ones, bounded by {@code consumerBroker}.
     */
    public ShareGroupCoordinator(ShareGroupBrokerConfig broker, ConsumerGroupBrokerConfig consumerBroker,
            TopicLookup topics, ShareGroupsSnapshot snapshot) {
        this.broker = Objects.requireNonNull(broker, "broker");
        this.consumerBroker = Objects.requireNonNull(consumerBroker, "consumerBroker");
        this.topics = Objects.requireNonNull(topics, "topics");
        for (ShareGroupsSnapshot.Group group : snapshot.groups()) {
            groups.put(group.groupId(), new ShareGroup(group.groupId(), group.groupEpoch()));
        }
        snapshot.configOverrides().forEach((groupId, overrides) -> {
            GroupConfig config = GroupConfig.restore(broker, consumerBroker, overrides);
            if (!config.overrides().isEmpty()) {
                configs.put(groupId, config);
            }
        });
    }

    /** Handles a ShareGroupHeartbeat following KIP-932's rules; protocol errors are values. */
    public HeartbeatResponse heartbeat(HeartbeatRequest req, long nowMs) {
        String invalid = invalidReason(req);
        if (invalid != null) {
            return HeartbeatResponse.error(Errors.INVALID_REQUEST, invalid);
        }
        if (req.memberEpoch() == HeartbeatRequest.LEAVE_EPOCH) {
            return leave(req);
        }
        ShareGroup group = groups.get(req.groupId());
        ShareGroupMember member = group == null ? null : group.member(req.memberId()).orElse(null);
        if (req.memberEpoch() != HeartbeatRequest.JOIN_EPOCH) {
            // Also for an unknown group (a restart without its members): the client rejoins on
            // UNKNOWN_MEMBER_ID, whereas GROUP_ID_NOT_FOUND would be fatal to it.
            if (member == null) {
                return unknownMember(req);
            }
            if (req.memberEpoch() > member.memberEpoch
                    || (req.memberEpoch() < member.memberEpoch
                            && req.memberEpoch() != member.previousMemberEpoch)) {
                return HeartbeatResponse.error(Errors.FENCED_MEMBER_EPOCH, "The member epoch "
                        + req.memberEpoch() + " does not match the coordinator's "
                        + member.memberEpoch + " for member " + req.memberId());
            }
        } else if (member == null && group != null && group.size() >= broker.maxSize()) {
            return HeartbeatResponse.error(Errors.GROUP_MAX_SIZE_REACHED, "The share group "
                    + req.groupId() + " has reached its maximum size of " + broker.maxSize() + " members");
        }
        if (group == null) {
            group = new ShareGroup(req.groupId(), 0);
            groups.put(req.groupId(), group);
            changeCount++;
        }
        boolean isNew = member == null;
        if (isNew) {
            member = new ShareGroupMember(req.memberId());
        }
        boolean subscriptionChanged = apply(req, member);
        if (isNew) {
            group.addMember(member, topics);
        } else if (subscriptionChanged) {
            group.onSubscriptionChanged(topics);
        }
        // A request carrying the previous epoch may have missed the response with the new target.
        boolean behind = req.memberEpoch() != HeartbeatRequest.JOIN_EPOCH
                && req.memberEpoch() < member.memberEpoch;
        boolean changed = reconcile(group, member);
        GroupConfig config = groupConfig(req.groupId());
        armSession(group.groupId, member, nowMs + config.effectiveSessionTimeoutMs());
        boolean sendAssignment = req.memberEpoch() == HeartbeatRequest.JOIN_EPOCH
                || req.subscribedTopicNames() != null || changed || behind;
        return new HeartbeatResponse(Errors.NONE, null, member.memberId, member.memberEpoch,
                config.effectiveHeartbeatIntervalMs(), sendAssignment ? Assignments.byTopic(member.assignment) : null);
    }

    /**
     * Removes every member whose session deadline is at or before {@code nowMs} and rebalances its
     * group. Returns the removed members, so the share-partition side can release their locks.
     */
    public List<MemberKey> expireSessions(long nowMs) {
        List<MemberKey> expired = new ArrayList<>();
        while (!deadlines.isEmpty() && deadlines.first().deadlineMs() <= nowMs) {
            SessionDeadline deadline = deadlines.pollFirst();
            ShareGroup group = groups.get(deadline.groupId());
            group.removeMember(deadline.memberId(), topics);
            expired.add(new MemberKey(deadline.groupId(), deadline.memberId()));
        }
        return expired;
    }

    /** The earliest member session deadline, or {@link Long#MAX_VALUE} when there are no members. */
    public long nextDeadlineMs() {
        return deadlines.isEmpty() ? Long.MAX_VALUE : deadlines.first().deadlineMs();
    }

    /**
     * Topics were created or deleted or gained partitions: recomputes every group's target; groups
     * whose subscribed topics or assignment changed move to a new epoch.
     */
    public void onTopicsChanged(long nowMs) {
        for (ShareGroup group : groups.values()) {
            if (group.size() > 0) {
                group.onTopicsChanged(topics);
            }
        }
    }

    /** The group for ShareGroupDescribe, or empty (GROUP_ID_NOT_FOUND) when there is none. */
    public Optional<GroupDescription> describe(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return Optional.empty();
        }
        List<MemberDescription> members = new ArrayList<>();
        for (ShareGroupMember m : group.members()) {
            members.add(new MemberDescription(m.memberId, m.rackId, m.memberEpoch, m.clientId,
                    m.clientHost, m.subscribedTopicNames, Assignments.describe(m.assignment, group::topicName, topics)));
        }
        return Optional.of(new GroupDescription(groupId, group.state(), group.groupEpoch(),
                group.assignmentEpoch(), SimpleAssignor.NAME, List.copyOf(members)));
    }

    /** Every share group, sorted by id. */
    public List<GroupListing> listGroups() {
        List<GroupListing> listings = new ArrayList<>(groups.size());
        groups.values().forEach(g -> listings.add(new GroupListing(g.groupId, g.state())));
        return listings;
    }

    /**
     * DeleteGroups for one id: {@link Errors#NONE} (the group is Dead and gone, its configs too),
     * {@link Errors#NON_EMPTY_GROUP} while it has members, or {@link Errors#GROUP_ID_NOT_FOUND}.
     */
    public Errors deleteGroup(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (group.size() > 0) {
            return Errors.NON_EMPTY_GROUP;
        }
        group.markDead();
        groups.remove(groupId);
        configs.remove(groupId);
        changeCount++;
        return Errors.NONE;
    }

    /**
     * Whether a group's share-partition offsets may be changed now (Alter and
     * DeleteShareGroupOffsets): {@link Errors#NONE} for an Empty group, {@link
     * Errors#NON_EMPTY_GROUP} while it has members, {@link Errors#GROUP_ID_NOT_FOUND} for none.
     * With {@code createIfMissing} a missing group is created Empty first, as Kafka does for
     * AlterShareGroupOffsets.
     */
    public Errors checkOffsetsChangeable(String groupId, boolean createIfMissing) {
        ShareGroup group = groups.get(groupId);
        if (group == null && createIfMissing) {
            group = new ShareGroup(groupId, 0);
            groups.put(groupId, group);
            changeCount++;
        }
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        return group.size() > 0 ? Errors.NON_EMPTY_GROUP : Errors.NONE;
    }

    /**
     * Knows {@code groupId} as an existing share group, Empty if it was not known: its existence
     * was made durable elsewhere (a gateway node took over the state partition that records it).
     */
    public void restoreGroup(String groupId) {
        if (!groups.containsKey(groupId)) {
            groups.put(groupId, new ShareGroup(groupId, 0));
            changeCount++;
        }
    }

    /**
     * Gateway: another node coordinates {@code groupId} from now on (the state partition of its
     * existence moved there), so it is dropped here, members and all, without a trace written:
     * its members are sent on to the new coordinator, which knows the group from its state.
     */
    public void releaseGroup(String groupId) {
        if (groups.remove(groupId) != null) {
            deadlines.removeIf(d -> d.groupId().equals(groupId));
            changeCount++;
        }
    }

    public boolean exists(String groupId) {
        return groups.containsKey(groupId);
    }

    /** Whether {@code memberId} is currently a member of {@code groupId}. */
    public boolean isMember(String groupId, String memberId) {
        ShareGroup group = groups.get(groupId);
        return group != null && group.member(memberId).isPresent();
    }

    /** The configs of a group id (broker defaults if nothing is stored), group or not. */
    public GroupConfig groupConfig(String groupId) {
        GroupConfig config = configs.get(groupId);
        return config != null ? config : GroupConfig.defaults(broker, consumerBroker);
    }

    /** {@link #alterGroupConfig(String, Map, boolean)} without validate-only. */
    public AlterConfigResult alterGroupConfig(String groupId, Map<String, String> changes) {
        return alterGroupConfig(groupId, changes, false);
    }

    /**
     * IncrementalAlterConfigs on a GROUP resource: a non-null value sets an override, a null value
     * deletes it. All changes apply or none. The group need not exist. New session timeouts apply
     * from each member's next heartbeat.
     */
    public AlterConfigResult alterGroupConfig(
            String groupId, Map<String, String> changes, boolean validateOnly) {
        if (groupId == null || groupId.isEmpty()) {
            return new AlterConfigResult(Errors.INVALID_REQUEST, "The group id must not be empty");
        }
        GroupConfig next;
        try {
            next = groupConfig(groupId).withChanges(groupId, changes);
        } catch (InvalidConfigurationException e) {
            return new AlterConfigResult(Errors.INVALID_CONFIG, e.getMessage());
        }
        if (!validateOnly) {
            if (next.overrides().isEmpty()) {
                configs.remove(groupId);
            } else {
                configs.put(groupId, next);
            }
            changeCount++;
        }
        return AlterConfigResult.OK;
    }

    /** Group ids with stored config overrides, sorted (ListConfigResources). */
    public Set<String> configuredGroupIds() {
        return Collections.unmodifiableSet(new TreeSet<>(configs.keySet()));
    }

    /** Group ids, epochs and config overrides, for the server to persist. */
    public ShareGroupsSnapshot snapshot() {
        List<ShareGroupsSnapshot.Group> list = new ArrayList<>(groups.size());
        groups.values().forEach(g -> list.add(new ShareGroupsSnapshot.Group(g.groupId, g.groupEpoch())));
        Map<String, Map<String, String>> overrides = new TreeMap<>();
        configs.forEach((id, config) -> overrides.put(id, config.overrides()));
        return new ShareGroupsSnapshot(list, overrides);
    }

    /**
     * Counts changes that the server should persist: groups created or deleted and configs
     * altered. Group epochs in a snapshot are as of the last such change or later.
     */
    public long changeCount() {
        return changeCount;
    }

    private static String invalidReason(HeartbeatRequest req) {
        if (req.groupId() == null || req.groupId().isEmpty()) {
            return "GroupId can't be empty.";
        }
        if (req.memberId() == null || req.memberId().isEmpty()) {
            return "MemberId can't be empty.";
        }
        if (req.memberId().length() > MAX_MEMBER_ID_LENGTH) {
            return "MemberId can't be longer than " + MAX_MEMBER_ID_LENGTH + " characters.";
        }
        if (req.memberEpoch() < HeartbeatRequest.LEAVE_EPOCH) {
            return "MemberEpoch is invalid.";
        }
        if (req.rackId() != null && req.rackId().isEmpty()) {
            return "RackId can't be empty.";
        }
        if (req.memberEpoch() == HeartbeatRequest.JOIN_EPOCH
                && (req.subscribedTopicNames() == null || req.subscribedTopicNames().isEmpty())) {
            return "SubscribedTopicNames must be set in first request.";
        }
        return null;
    }

    private HeartbeatResponse leave(HeartbeatRequest req) {
        ShareGroup group = groups.get(req.groupId());
        if (group == null || group.member(req.memberId()).isEmpty()) {
            return unknownMember(req);
        }
        ShareGroupMember member = group.member(req.memberId()).orElseThrow();
        deadlines.remove(new SessionDeadline(member.sessionDeadlineMs, group.groupId, member.memberId));
        group.removeMember(member.memberId, topics);
        return new HeartbeatResponse(Errors.NONE, null, req.memberId(), HeartbeatRequest.LEAVE_EPOCH,
                groupConfig(req.groupId()).effectiveHeartbeatIntervalMs(), null);
    }

    private static HeartbeatResponse unknownMember(HeartbeatRequest req) {
        return HeartbeatResponse.error(Errors.UNKNOWN_MEMBER_ID,
                "Member " + req.memberId() + " is not a member of share group " + req.groupId());
    }

    /** Copies request fields onto the member; returns whether the subscription changed. */
    private static boolean apply(HeartbeatRequest req, ShareGroupMember member) {
        member.clientId = req.clientId();
        member.clientHost = req.clientHost();
        if (req.rackId() != null) {
            member.rackId = req.rackId();
        }
        if (req.subscribedTopicNames() == null) {
            return false;
        }
        List<String> names = List.copyOf(new TreeSet<>(req.subscribedTopicNames()));
        boolean changed = !names.equals(member.subscribedTopicNames);
        member.subscribedTopicNames = names;
        return changed;
    }

    /** Moves the member to the group's current target; returns whether its partitions changed. */
    private static boolean reconcile(ShareGroup group, ShareGroupMember member) {
        if (member.memberEpoch == group.assignmentEpoch()) {
            return false;
        }
        Set<PartitionKey> target = group.target(member.memberId);
        boolean changed = !target.equals(member.assignment);
        member.previousMemberEpoch = member.memberEpoch;
        member.memberEpoch = group.assignmentEpoch();
        member.assignment = target;
        return changed;
    }

    private void armSession(String groupId, ShareGroupMember member, long deadlineMs) {
        deadlines.remove(new SessionDeadline(member.sessionDeadlineMs, groupId, member.memberId));
        member.sessionDeadlineMs = deadlineMs;
        deadlines.add(new SessionDeadline(deadlineMs, groupId, member.memberId));
    }
}
