package io.pier.group.consumer;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.pier.group.Assignments;
import io.pier.group.ClassicGroupHandover;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicSync;
import io.pier.group.ClassicSyncResult;
import io.pier.group.PartitionKey;
import io.pier.group.RebalanceCounter;
import io.pier.group.TopicLookup;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.kafka.common.protocol.Errors;

/**
 * The consumer-protocol (KIP-848) group coordinator of one shard: the groups whose ids hash there,
 * their members, target assignments (server-side {@link PartitionAssignor}s), reconciliation with
 * revocation before reassignment, session and revocation deadlines.
 *
 * <p>Pure and single-owner: no threads, no clock (every call carries {@code nowMs}); the owner
 * runs {@link #onDeadlines} once {@link #nextDeadlineMs()} has come. Groups live in memory only:
 * after a restart members get UNKNOWN_MEMBER_ID and rejoin with epoch 0, while committed offsets,
 * which are durable, are kept by their own store (as for share and classic groups here).
 *
 * <p>Invariants: each member has exactly one entry in {@code deadlines}, at its {@link
 * ConsumerMember#nextDeadlineMs()}; every group has at least one member or was created Empty by
 * {@link #createEmpty}, and leaves only through {@link #deleteGroup} or {@link #removeEmpty}.
 */
public final class ConsumerGroupCoordinator {
    /** Per-group timings: the group's {@code consumer.*} configs, else the broker's. */
    public interface Timings {
        int sessionTimeoutMs(String groupId);

        int heartbeatIntervalMs(String groupId);
    }

    /** A member's entry in {@code deadlines}; the member keeps the one it is filed under. */
    record Deadline(long atMs, String groupId, String memberId) {}

    private static final Comparator<Deadline> ORDER = Comparator.comparingLong(Deadline::atMs)
            .thenComparing(Deadline::groupId).thenComparing(Deadline::memberId);

    private final ConsumerGroupBrokerConfig broker;
    private final TopicLookup topics;
    private final Supplier<String> memberIds;
    private Timings timings;
    private final Map<String, ConsumerGroup> groups = new HashMap<>();
    private final TreeSet<Deadline> deadlines = new TreeSet<>(ORDER);
    private final Set<String> downgrades = new TreeSet<>();
    private final ClassicMembers classic = new ClassicMembers(this);
    private final RebalanceCounter rebalances = new RebalanceCounter();

    /** @param memberIds new member ids for v0 clients that leave them to the coordinator */
    public ConsumerGroupCoordinator(ConsumerGroupBrokerConfig broker, TopicLookup topics, Supplier<String> memberIds) {
        this.broker = broker;
        this.topics = topics;
        this.memberIds = memberIds;
        this.timings = new Timings() {
            @Override
            public int sessionTimeoutMs(String groupId) {
                return broker.sessionTimeoutMs();
            }

            @Override
            public int heartbeatIntervalMs(String groupId) {
                return broker.heartbeatIntervalMs();
            }
        };
    }

    /** While wiring: where per-group {@code consumer.*} overrides come from. */
    public void timings(Timings timings) {
        this.timings = timings;
    }

    public boolean exists(String groupId) {
        return groups.containsKey(groupId);
    }

    public boolean isEmpty(String groupId) {
        ConsumerGroup g = groups.get(groupId);
        return g == null || g.size() == 0;
    }

    /** An Empty group of this type (an Empty classic group whose id a consumer-protocol member takes). */
    public void createEmpty(String groupId) {
        groups.computeIfAbsent(groupId, id -> new ConsumerGroup(id, broker.defaultAssignor(), rebalances));
    }

    /** Drops an Empty group (its id goes to a classic group); false if it has members. */
    public boolean removeEmpty(String groupId) {
        ConsumerGroup g = groups.get(groupId);
        if (g == null || g.size() > 0) {
            return g == null;
        }
        groups.remove(groupId);
        return true;
    }

    /** Handles a ConsumerGroupHeartbeat following KIP-848's rules; protocol errors are values. */
    public ConsumerHeartbeatResult heartbeat(ConsumerHeartbeat req, long nowMs) {
        ConsumerHeartbeatResult invalid = validate(req);
        if (invalid != null) {
            return invalid;
        }
        if (req.memberEpoch() == ConsumerHeartbeat.LEAVE_EPOCH
                || req.memberEpoch() == ConsumerHeartbeat.LEAVE_STATIC_EPOCH) {
            return leave(req);
        }
        ConsumerGroup group = groups.get(req.groupId());
        String memberId = req.memberId().isEmpty() ? memberIds.get() : req.memberId();
        ConsumerMember member;
        boolean rebalance = false;
        if (req.memberEpoch() != ConsumerHeartbeat.JOIN_EPOCH) {
            member = group == null ? null : group.member(memberId).orElse(null);
            if (member == null) {
                // Also for an unknown group (a restart without its members): the client rejoins on
                // UNKNOWN_MEMBER_ID, whereas GROUP_ID_NOT_FOUND would be fatal to it.
                return unknownMember(req);
            }
            if (req.instanceId() != null && !req.instanceId().equals(member.instanceId)) {
                return ConsumerHeartbeatResult.error(Errors.FENCED_INSTANCE_ID, "Static member " + memberId
                        + " with instance id " + req.instanceId() + " is fenced by member "
                        + group.staticMember(req.instanceId()).map(m -> m.memberId).orElse("none") + ".");
            }
            ConsumerHeartbeatResult fenced = checkEpoch(member, req);
            if (fenced != null) {
                return fenced;
            }
        } else {
            if (group == null) {
                group = new ConsumerGroup(req.groupId(), broker.defaultAssignor(), rebalances);
                groups.put(req.groupId(), group);
            }
            member = group.member(memberId).orElse(null);
            ConsumerMember away = req.instanceId() == null ? null : group.staticMember(req.instanceId()).orElse(null);
            if (away != null && away != member) {
                if (away.memberEpoch != ConsumerHeartbeat.LEAVE_STATIC_EPOCH) {
                    return ConsumerHeartbeatResult.error(Errors.UNRELEASED_INSTANCE_ID, "Static member " + memberId
                            + " with instance id " + req.instanceId()
                            + " cannot join the group because the instance id is owned by member "
                            + away.memberId + ".");
                }
                unschedule(away);
                member = group.replaceStatic(away, memberId);
                member.rejoin();
            } else if (member == null) {
                if (group.size() >= broker.maxSize()) {
                    return ConsumerHeartbeatResult.error(Errors.GROUP_MAX_SIZE_REACHED, "The consumer group "
                            + req.groupId() + " has reached its maximum size of " + broker.maxSize() + " members.");
                }
                member = new ConsumerMember(memberId);
                member.instanceId = req.instanceId();
                group.add(member);
                rebalance = true;
            } else {
                // The member rejoins from scratch (it was fenced): it has dropped its partitions.
                group.release(member);
                member.rejoin();
            }
        }
        rebalance |= apply(req, member);
        member.classicProtocols = null; // a classic member that now heartbeats speaks the consumer protocol
        if (rebalance) {
            group.rebalance(topics, broker.defaultAssignor(), true);
        }
        boolean changed = reconcile(group, member, req.ownedPartitions(), nowMs);
        arm(group, member, nowMs + timings.sessionTimeoutMs(group.groupId));
        return new ConsumerHeartbeatResult(Errors.NONE, null, member.memberId, member.memberEpoch,
                heartbeatIntervalMs(group, member),
                req.isFull() || changed ? Assignments.byTopic(member.assigned) : null);
    }

    /**
     * Reconciles a member and keeps its revocation deadline: set when it is first asked to revoke,
     * kept while it still must, cleared once it has. Returns whether its partitions changed.
     */
    boolean reconcile(ConsumerGroup group, ConsumerMember member, Set<PartitionKey> owned, long nowMs) {
        MemberState stateBefore = member.state;
        boolean changed = group.reconcile(member, owned);
        if (member.state != MemberState.UNREVOKED_PARTITIONS) {
            member.revocationDeadlineMs = Long.MAX_VALUE;
        } else if (stateBefore != MemberState.UNREVOKED_PARTITIONS || member.revocationDeadlineMs == Long.MAX_VALUE) {
            member.revocationDeadlineMs = nowMs + member.rebalanceTimeoutMs;
        }
        return changed;
    }

    /**
     * The interval a member is told to heartbeat at. A member that waits for partitions another
     * still holds hears of their release only on its next heartbeat, so while it waits it is told
     * to come back after {@link ConsumerGroupBrokerConfig#reconcileHeartbeatIntervalMs()} rather
     * than the group's interval: a partition moves in well under a second instead of up to one
     * heartbeat interval (5 s by default) after its old owner let go. Kafka's coordinator does not
     * shorten it; clients take whatever interval a response says.
     */
    private int heartbeatIntervalMs(ConsumerGroup group, ConsumerMember member) {
        int interval = timings.heartbeatIntervalMs(group.groupId);
        return member.state == MemberState.UNRELEASED_PARTITIONS
                ? Math.min(interval, broker.reconcileHeartbeatIntervalMs())
                : interval;
    }

    /** Moves a member's session deadline (its entry in {@code deadlines} with it). */
    void arm(ConsumerGroup group, ConsumerMember member, long sessionDeadlineMs) {
        member.sessionDeadlineMs = sessionDeadlineMs;
        schedule(group, member);
    }

    ConsumerGroup group(String groupId) {
        return groups.get(groupId);
    }

    ConsumerGroup createGroup(String groupId) {
        return groups.computeIfAbsent(groupId, id -> new ConsumerGroup(id, broker.defaultAssignor(), rebalances));
    }

    ConsumerGroupBrokerConfig broker() {
        return broker;
    }

    TopicLookup topics() {
        return topics;
    }

    /** The error a heartbeat gets before any group is looked at (bad fields, assignor, regex), or null. */
    public ConsumerHeartbeatResult validate(ConsumerHeartbeat req) {
        String reason = null;
        if (req.groupId() == null || req.groupId().isEmpty()) {
            reason = "GroupId can't be empty.";
        } else if (req.instanceId() != null && req.instanceId().isEmpty()) {
            reason = "InstanceId can't be empty.";
        } else if (req.rackId() != null && req.rackId().isEmpty()) {
            reason = "RackId can't be empty.";
        } else if (req.memberEpoch() == ConsumerHeartbeat.JOIN_EPOCH) {
            if (req.rebalanceTimeoutMs() == -1) {
                reason = "RebalanceTimeoutMs must be provided in first request.";
            } else if (req.ownedPartitions() == null || !req.ownedPartitions().isEmpty()) {
                reason = "TopicPartitions must be empty when (re-)joining.";
            } else if ((req.subscribedTopicNames() == null || req.subscribedTopicNames().isEmpty())
                    && req.subscribedTopicRegex() == null) {
                reason = "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.";
            }
        } else if (req.memberEpoch() < ConsumerHeartbeat.LEAVE_STATIC_EPOCH) {
            reason = "MemberEpoch is invalid.";
        } else if (req.memberId() == null || req.memberId().isEmpty()) {
            reason = "MemberId can't be empty.";
        } else if (req.memberEpoch() == ConsumerHeartbeat.LEAVE_STATIC_EPOCH && req.instanceId() == null) {
            reason = "InstanceId can't be null.";
        }
        if (reason != null) {
            return ConsumerHeartbeatResult.error(Errors.INVALID_REQUEST, reason);
        }
        if (req.serverAssignor() != null && !broker.assignors().contains(req.serverAssignor())) {
            return ConsumerHeartbeatResult.error(Errors.UNSUPPORTED_ASSIGNOR, "ServerAssignor "
                    + req.serverAssignor() + " is not supported. Supported assignors: "
                    + String.join(", ", broker.assignors()) + ".");
        }
        if (req.subscribedTopicRegex() != null && !req.subscribedTopicRegex().isEmpty()) {
            try {
                Pattern.compile(req.subscribedTopicRegex());
            } catch (PatternSyntaxException e) {
                return ConsumerHeartbeatResult.error(Errors.INVALID_REGULAR_EXPRESSION,
                        "SubscribedTopicRegex `" + req.subscribedTopicRegex() + "` is not a valid regular expression: "
                                + e.getMessage() + ".");
            }
        }
        return null;
    }

    /**
     * A heartbeat's epoch must be the member's, or its previous one when the member reports no
     * partition beyond what it has (the response with the new epoch may have been lost).
     */
    private static ConsumerHeartbeatResult checkEpoch(ConsumerMember member, ConsumerHeartbeat req) {
        int received = req.memberEpoch();
        boolean fenced = received > member.memberEpoch
                || (received < member.memberEpoch && (received != member.previousMemberEpoch
                        || req.ownedPartitions() == null || !member.assigned.containsAll(req.ownedPartitions())));
        if (!fenced) {
            return null;
        }
        return ConsumerHeartbeatResult.error(Errors.FENCED_MEMBER_EPOCH, "The consumer group member has a "
                + (received > member.memberEpoch ? "greater" : "smaller") + " member epoch (" + received
                + ") than the one known by the group coordinator (" + member.memberEpoch
                + "). The member must abandon all its partitions and rejoin.");
    }

    private ConsumerHeartbeatResult leave(ConsumerHeartbeat req) {
        ConsumerGroup group = groups.get(req.groupId());
        ConsumerMember member = group == null ? null : group.member(req.memberId()).orElse(null);
        if (member == null) {
            return unknownMember(req);
        }
        if (req.memberEpoch() == ConsumerHeartbeat.LEAVE_STATIC_EPOCH) {
            // Away for a while: it keeps its partitions until its session ends or it comes back.
            member.updateEpoch(ConsumerHeartbeat.LEAVE_STATIC_EPOCH);
        } else {
            fence(group, member);
        }
        return new ConsumerHeartbeatResult(Errors.NONE, null, req.memberId(), req.memberEpoch(),
                timings.heartbeatIntervalMs(group.groupId), null);
    }

    /**
     * Removes a member and rebalances. When only classic-protocol members are left, the group is
     * marked for the classic protocol (online downgrade, see {@link #takeDowngrades}).
     */
    void fence(ConsumerGroup group, ConsumerMember member) {
        unschedule(member);
        group.remove(member);
        group.rebalance(topics, broker.defaultAssignor(), true);
        if (!member.isClassic() && group.size() > 0
                && group.members().stream().allMatch(ConsumerMember::isClassic)) {
            downgrades.add(group.groupId);
        }
    }

    /**
     * The groups whose last consumer-protocol member went, leaving classic members only: the owner
     * hands each to the classic coordinator ({@link #handOverToClassic}), as Kafka 4.4's default
     * migration policy does.
     */
    public List<String> takeDowngrades() {
        List<String> ids = new ArrayList<>(downgrades);
        downgrades.clear();
        return ids;
    }

    private static ConsumerHeartbeatResult unknownMember(ConsumerHeartbeat req) {
        return ConsumerHeartbeatResult.error(Errors.UNKNOWN_MEMBER_ID,
                "Member " + req.memberId() + " is not a member of group " + req.groupId() + ".");
    }

    /** Copies request fields onto the member; returns whether its subscription changed. */
    private static boolean apply(ConsumerHeartbeat req, ConsumerMember member) {
        member.clientId = req.clientId() == null ? "" : req.clientId();
        member.clientHost = req.clientHost() == null ? "" : req.clientHost();
        if (req.rackId() != null) {
            member.rackId = req.rackId();
        }
        if (req.rebalanceTimeoutMs() != -1) {
            member.rebalanceTimeoutMs = req.rebalanceTimeoutMs();
        }
        boolean changed = false;
        if (req.serverAssignor() != null && !req.serverAssignor().equals(member.serverAssignor)) {
            member.serverAssignor = req.serverAssignor();
            changed = true;
        }
        if (req.subscribedTopicNames() != null) {
            List<String> names = List.copyOf(new TreeSet<>(req.subscribedTopicNames()));
            changed |= !names.equals(member.subscribedTopicNames);
            member.subscribedTopicNames = names;
        }
        if (req.subscribedTopicRegex() != null) {
            String regex = req.subscribedTopicRegex().isEmpty() ? null : req.subscribedTopicRegex();
            changed |= !Objects.equals(regex, member.subscribedTopicRegex);
            member.subscribedTopicRegex = regex;
        }
        return changed;
    }

    void schedule(ConsumerGroup group, ConsumerMember member) {
        unschedule(member);
        member.scheduled = new Deadline(member.nextDeadlineMs(), group.groupId, member.memberId);
        deadlines.add(member.scheduled);
    }

    void unschedule(ConsumerMember member) {
        // The entry it was filed under, not one built from its deadlines now: those may have moved.
        if (member.scheduled != null) {
            deadlines.remove(member.scheduled);
            member.scheduled = null;
        }
    }

    /** The earliest session or revocation deadline of any member. */
    public long nextDeadlineMs() {
        return deadlines.isEmpty() ? Long.MAX_VALUE : deadlines.first().atMs();
    }

    /**
     * Fences every member whose session ended, or that did not revoke in its rebalance timeout,
     * by {@code nowMs}; returns how many.
     */
    public int onDeadlines(long nowMs) {
        int fenced = 0;
        while (!deadlines.isEmpty() && deadlines.first().atMs() <= nowMs) {
            Deadline d = deadlines.first();
            ConsumerGroup group = groups.get(d.groupId());
            ConsumerMember member = group.member(d.memberId()).orElseThrow();
            fence(group, member);
            fenced++;
        }
        return fenced;
    }

    // ------------------------------------------------------------------ classic members (online migration)

    /**
     * Takes a classic group over (online upgrade): its members keep their partitions at the group's
     * generation and go on with JoinGroup, SyncGroup and Heartbeat, served by {@link ClassicMembers}.
     */
    public void adoptClassic(String groupId, ClassicGroupHandover handover, long nowMs) {
        classic.adopt(groupId, handover, nowMs);
    }

    /** Hands a group of classic members only to the classic coordinator (online downgrade). */
    public ClassicGroupHandover handOverToClassic(String groupId) {
        ConsumerGroup group = groups.remove(groupId);
        for (ConsumerMember m : group.members()) {
            unschedule(m);
        }
        return classic.handOver(group);
    }

    /** JoinGroup of a classic member to a group with members of this protocol; answered at once. */
    public ClassicJoinResult classicJoin(ClassicJoin req, String newMemberId, long nowMs) {
        return classic.join(req, newMemberId, nowMs);
    }

    public ClassicSyncResult classicSync(ClassicSync req, long nowMs) {
        return classic.sync(req, nowMs);
    }

    public Errors classicHeartbeat(String groupId, String memberId, String groupInstanceId, int generationId,
            long nowMs) {
        return classic.heartbeat(groupId, memberId, groupInstanceId, generationId, nowMs);
    }

    public ClassicLeave.Result classicLeave(String groupId, List<ClassicLeave.Member> members) {
        return classic.leave(groupId, members);
    }

    /** Topics were created, deleted or grew: every group's target follows. */
    public void onTopicsChanged() {
        for (ConsumerGroup g : groups.values()) {
            if (g.size() > 0) {
                g.rebalance(topics, broker.defaultAssignor(), false);
            }
        }
    }

    /**
     * Whether an OffsetCommit may go ahead: a commit without a member (epoch below 0) only to an
     * Empty group; else the member must exist (UNKNOWN_MEMBER_ID), use v9 or later
     * (UNSUPPORTED_VERSION) and send its current epoch (STALE_MEMBER_EPOCH).
     */
    public Errors validateOffsetCommit(String groupId, String memberId, int memberEpoch, short apiVersion) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (memberEpoch < 0 && group.size() == 0) {
            return Errors.NONE;
        }
        ConsumerMember member = memberId == null ? null : group.member(memberId).orElse(null);
        if (member == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (member.isClassic()) {
            return memberEpoch == member.memberEpoch ? Errors.NONE : Errors.ILLEGAL_GENERATION;
        }
        if (apiVersion < 9) {
            return Errors.UNSUPPORTED_VERSION;
        }
        // An older epoch is checked per partition (KIP-1251, Kafka 4.4): the member may not have
        // heard of its newer epoch yet when it commits.
        return memberEpoch <= member.memberEpoch ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
    }

    /**
     * The partition check of an OffsetCommit that {@link #validateOffsetCommit} let through: with
     * an epoch older than the member's, the partition must be the member's since that epoch or
     * earlier (STALE_MEMBER_EPOCH otherwise), so a commit never lands on a partition that moved.
     */
    public Errors validateOffsetCommitPartition(String groupId, String memberId, int memberEpoch,
            PartitionKey partition) {
        ConsumerGroup group = groups.get(groupId);
        ConsumerMember member = group == null || memberId == null ? null : group.member(memberId).orElse(null);
        if (member == null || member.isClassic() || memberEpoch < 0 || memberEpoch == member.memberEpoch) {
            return Errors.NONE;
        }
        Integer since = member.assignedAt.get(partition);
        return since != null && since <= memberEpoch ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
    }

    /** OffsetFetch with a member id and epoch (v9+): the member must exist at that epoch. */
    public Errors validateOffsetFetch(String groupId, String memberId, int memberEpoch) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null || memberId == null || memberEpoch < 0) {
            return Errors.NONE;
        }
        ConsumerMember member = group.member(memberId).orElse(null);
        if (member == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        return memberEpoch == member.memberEpoch ? Errors.NONE : Errors.STALE_MEMBER_EPOCH;
    }

    /** OffsetDelete of a topic's offsets: GROUP_SUBSCRIBED_TO_TOPIC while members subscribe to it. */
    public Errors validateOffsetDelete(String groupId, String topic) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        return group.size() > 0 && group.subscribedTopicNames().contains(topic)
                ? Errors.GROUP_SUBSCRIBED_TO_TOPIC
                : Errors.NONE;
    }

    /** DeleteGroups: NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for none. */
    public Errors deleteGroup(String groupId) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (group.size() > 0) {
            return Errors.NON_EMPTY_GROUP;
        }
        group.markDead();
        groups.remove(groupId);
        return Errors.NONE;
    }

    /**
     * For offset retention: Long.MAX_VALUE while the group has members (or there is no such
     * group), else Long.MIN_VALUE, because Kafka ages a consumer-protocol group's offsets from
     * their commits alone.
     */
    public long emptySinceMs(String groupId) {
        ConsumerGroup group = groups.get(groupId);
        return group == null || group.size() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }

    /** For offset retention of a group with members: whether some member subscribes to {@code topic}. */
    public boolean keepsOffsetsOf(String groupId, String topic) {
        ConsumerGroup group = groups.get(groupId);
        return group == null || group.subscribedTopicNames().contains(topic);
    }

    public List<ConsumerGroupListing> listGroups() {
        List<ConsumerGroupListing> all = new ArrayList<>();
        groups.values().forEach(g -> all.add(new ConsumerGroupListing(g.groupId, g.state())));
        all.sort(Comparator.comparing(ConsumerGroupListing::groupId));
        return all;
    }

    public Optional<ConsumerGroupDescription> describe(String groupId) {
        ConsumerGroup group = groups.get(groupId);
        if (group == null) {
            return Optional.empty();
        }
        List<ConsumerGroupDescription.Member> members = new ArrayList<>();
        for (ConsumerMember m : group.members()) {
            members.add(new ConsumerGroupDescription.Member(m.memberId, m.instanceId, m.rackId, m.memberEpoch,
                    m.clientId, m.clientHost, m.subscribedTopicNames, m.subscribedTopicRegex,
                    Assignments.describe(m.assigned, group::topicName, topics),
                    Assignments.describe(group.target(m.memberId), group::topicName, topics), m.isClassic()));
        }
        return Optional.of(new ConsumerGroupDescription(groupId, group.state(), group.groupEpoch(),
                group.assignmentEpoch(), group.assignorName(), List.copyOf(members)));
    }

    /** Group epoch bumps of this coordinator's groups since it was made (deleted groups included). */
    public long rebalances() {
        return rebalances.count();
    }
}
