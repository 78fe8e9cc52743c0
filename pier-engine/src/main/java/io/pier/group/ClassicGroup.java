package io.pier.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.protocol.Errors;

/**
 * One classic group: its members, generation, chosen protocol and the deadlines of its rebalance,
 * as Kafka's classic group coordinator keeps them. Owned by the coordinator's shard; every state
 * change goes through {@link #transitionTo}. Parked JoinGroup and SyncGroup requests are callbacks
 * held by their members and answered when the rebalance moves on; nothing here waits or reads a
 * clock ({@code nowMs} comes with every call). This class holds the state and the rebalance
 * itself; {@link ClassicJoinPhase} takes JoinGroup, {@link ClassicSyncPhase} SyncGroup and
 * {@link ClassicGroupDeadlines} the timeouts, each on the same state and thread.
 *
 * <pre>
 *   deadlines (each Long.MAX_VALUE when unset):
 *     joinDeadlineMs    PreparingRebalance: the initial delay (Empty before), else the rebalance
 *                       timeout, after which members that did not rejoin are dropped
 *     syncDeadlineMs    CompletingRebalance/Stable: members that got a JoinGroup answer but sent no
 *                       SyncGroup within the rebalance timeout are dropped, and the group rebalances
 *     member.heartbeatDeadlineMs, pending member deadlines: session timeouts
 * </pre>
 */
final class ClassicGroup {
    final String groupId;
    final ClassicGroupConfig config;
    /** The coordinator's count of generations started, over all its groups. */
    private final RebalanceCounter rebalances;
    private ClassicGroupState state = ClassicGroupState.EMPTY;
    private ClassicGroupState previousState = ClassicGroupState.EMPTY;
    int generationId;
    String protocolType;
    String protocolName;
    String leaderId;
    final LinkedHashMap<String, ClassicGroupMember> members = new LinkedHashMap<>();
    final Map<String, String> staticMembers = new HashMap<>();
    /** Members given an id (MEMBER_ID_REQUIRED) that have not joined with it yet, to their deadline. */
    final Map<String, Long> pendingMembers = new HashMap<>();
    final Set<String> pendingSync = new HashSet<>();
    long joinDeadlineMs = Long.MAX_VALUE;
    boolean initialJoin;
    int initialRemainingMs;
    boolean newMemberAdded;
    long syncDeadlineMs = Long.MAX_VALUE;
    /**
     * When the last member went (monotonic ms), for offset retention; Long.MIN_VALUE while the
     * group never had one (a simple group, whose offsets age from their commits).
     */
    long emptySinceMs = Long.MIN_VALUE;
    private final ClassicJoinPhase joinPhase = new ClassicJoinPhase(this);
    private final ClassicSyncPhase syncPhase = new ClassicSyncPhase(this);
    private final ClassicGroupDeadlines deadlines = new ClassicGroupDeadlines(this);

    ClassicGroup(String groupId, ClassicGroupConfig config, RebalanceCounter rebalances) {
        this.groupId = groupId;
        this.config = config;
        this.rebalances = rebalances;
    }

    ClassicGroupState state() {
        return state;
    }

    ClassicGroupState previousState() {
        return previousState;
    }

    int generationId() {
        return generationId;
    }

    String protocolType() {
        return protocolType;
    }

    boolean isEmpty() {
        return state == ClassicGroupState.EMPTY;
    }

    /** The one place the group's state changes. */
    void transitionTo(ClassicGroupState next) {
        if (!state.canTransitionTo(next)) {
            throw new IllegalStateException("group " + groupId + " cannot go from " + state + " to " + next);
        }
        previousState = state;
        state = next;
    }

    void markDead() {
        transitionTo(ClassicGroupState.DEAD);
    }

    // ------------------------------------------------------------------ JoinGroup, SyncGroup, deadlines

    /** JoinGroup; {@code reply} now or when the join phase ends. See {@link ClassicJoinPhase}. */
    void join(ClassicJoin req, String newMemberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        joinPhase.join(req, newMemberId, nowMs, reply);
    }

    /** SyncGroup; {@code reply} now or when the leader's assignment comes. See {@link ClassicSyncPhase}. */
    void sync(ClassicSync req, long nowMs, Consumer<ClassicSyncResult> reply) {
        syncPhase.sync(req, nowMs, reply);
    }

    long nextDeadlineMs() {
        return deadlines.nextDeadlineMs();
    }

    /** Runs whatever is due at {@code nowMs}. See {@link ClassicGroupDeadlines}. */
    void onDeadlines(long nowMs) {
        deadlines.onDeadlines(nowMs);
    }








    /**
     * Hands the group and its members to the consumer protocol (online upgrade): parked JoinGroup
     * and SyncGroup calls are answered REBALANCE_IN_PROGRESS, so those members rejoin the
     * consumer-protocol group; the group is Dead after.
     */
    ClassicGroupHandover handOver() {
        List<ClassicMemberState> out = new ArrayList<>();
        for (ClassicGroupMember m : members.values()) {
            m.answerJoin(ClassicJoinResult.error(Errors.REBALANCE_IN_PROGRESS, m.memberId));
            m.answerSync(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
            out.add(new ClassicMemberState(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
                    m.rebalanceTimeoutMs, m.sessionTimeoutMs, m.protocols, m.assignment));
        }
        pendingMembers.clear();
        markDead();
        return new ClassicGroupHandover(generationId, out);
    }

    /**
     * Takes members over from the consumer protocol (online downgrade): the group is Stable at the
     * handed-over generation with each member's assignment, then rebalances at once, so every
     * member rejoins with the classic protocol (a member that does not is dropped as usual).
     */
    void adopt(ClassicGroupHandover handover, long nowMs) {
        protocolType = ClassicGroupCoordinator.CONSUMER_PROTOCOL_TYPE;
        for (ClassicMemberState s : handover.members()) {
            ClassicGroupMember m = new ClassicGroupMember(s.memberId(), new ClassicJoin(groupId, s.memberId(),
                    s.groupInstanceId(), s.clientId(), s.clientHost(), s.sessionTimeoutMs(), s.rebalanceTimeoutMs(),
                    protocolType, s.protocols(), false, false));
            m.assignment = s.assignment();
            m.heartbeatDeadlineMs = nowMs + s.sessionTimeoutMs();
            members.put(m.memberId, m);
            if (m.groupInstanceId != null) {
                staticMembers.put(m.groupInstanceId, m.memberId);
            }
        }
        leaderId = members.keySet().iterator().next();
        generationId = handover.generationId();
        protocolName = selectProtocol();
        transitionTo(ClassicGroupState.PREPARING_REBALANCE);
        transitionTo(ClassicGroupState.COMPLETING_REBALANCE);
        transitionTo(ClassicGroupState.STABLE);
        prepareRebalance(nowMs);
    }

    ClassicJoinResult joinResult(String memberId, boolean withMembers, boolean skipAssignment,
            String leader) {
        List<ClassicJoinResult.Member> list = new ArrayList<>();
        if (withMembers) {
            for (ClassicGroupMember m : members.values()) {
                list.add(new ClassicJoinResult.Member(m.memberId, m.groupInstanceId, m.metadata(protocolName)));
            }
        }
        return new ClassicJoinResult(Errors.NONE, generationId, protocolType, protocolName, leader, memberId,
                skipAssignment, list);
    }






    /** The protocol every member supports that most members prefer (ties: the earliest member's). */
    String selectProtocol() {
        ClassicGroupMember first = members.values().iterator().next();
        Set<String> candidates = new HashSet<>();
        for (ClassicProtocol p : first.protocols) {
            if (members.values().stream().allMatch(m -> m.supports(p.name()))) {
                candidates.add(p.name());
            }
        }
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (ClassicGroupMember m : members.values()) {
            votes.merge(m.vote(candidates), 1, Integer::sum);
        }
        String best = null;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (best == null || e.getValue() > votes.get(best)) {
                best = e.getKey();
            }
        }
        return best;
    }

    Errors validateMember(String memberId, String groupInstanceId) {
        if (groupInstanceId != null) {
            String existing = staticMembers.get(groupInstanceId);
            if (existing == null) {
                return Errors.UNKNOWN_MEMBER_ID;
            } else if (!existing.equals(memberId)) {
                return Errors.FENCED_INSTANCE_ID;
            }
        }
        return members.containsKey(memberId) ? Errors.NONE : Errors.UNKNOWN_MEMBER_ID;
    }

    // ------------------------------------------------------------------ rebalance

    int rebalanceTimeoutMs() {
        int max = 0;
        for (ClassicGroupMember m : members.values()) {
            max = Math.max(max, m.rebalanceTimeoutMs);
        }
        return max;
    }

    void rebalanceOrCompleteJoin(long nowMs) {
        if (state == ClassicGroupState.STABLE || state == ClassicGroupState.COMPLETING_REBALANCE
                || state == ClassicGroupState.EMPTY) {
            prepareRebalance(nowMs);
        } else {
            completeJoinIfAllJoined(nowMs);
        }
    }

    void prepareRebalance(long nowMs) {
        if (state == ClassicGroupState.COMPLETING_REBALANCE) {
            // Members waiting for their assignment must rejoin instead.
            for (ClassicGroupMember m : members.values()) {
                m.assignment = ClassicSyncResult.EMPTY_ASSIGNMENT;
                m.answerSync(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
            }
        }
        pendingSync.clear();
        syncDeadlineMs = Long.MAX_VALUE;
        boolean initial = state == ClassicGroupState.EMPTY;
        transitionTo(ClassicGroupState.PREPARING_REBALANCE);
        if (initial) {
            // A new group waits a little for more members, up to the rebalance timeout in all.
            initialJoin = true;
            newMemberAdded = false;
            initialRemainingMs = Math.max(rebalanceTimeoutMs() - config.initialRebalanceDelayMs(), 0);
            joinDeadlineMs = nowMs + config.initialRebalanceDelayMs();
        } else if (allMembersJoined()) {
            completeJoin(nowMs);
        } else {
            initialJoin = false;
            joinDeadlineMs = nowMs + rebalanceTimeoutMs();
        }
    }

    boolean allMembersJoined() {
        return pendingMembers.isEmpty() && members.values().stream().allMatch(m -> m.awaitingJoin != null);
    }

    void completeJoinIfAllJoined(long nowMs) {
        if (state == ClassicGroupState.PREPARING_REBALANCE && previousState != ClassicGroupState.EMPTY
                && allMembersJoined()) {
            completeJoin(nowMs);
        }
    }

    /** Ends the join phase: drops who did not rejoin, starts the next generation, answers the joins. */
    void completeJoin(long nowMs) {
        joinDeadlineMs = Long.MAX_VALUE;
        for (ClassicGroupMember m : new ArrayList<>(members.values())) {
            if (m.awaitingJoin == null && m.groupInstanceId == null) {
                remove(m.memberId);
            }
        }
        if (!electJoinedLeader() && !members.isEmpty()) {
            // Nobody rejoined: wait another rebalance timeout for sessions to expire.
            initialJoin = false;
            joinDeadlineMs = nowMs + rebalanceTimeoutMs();
            return;
        }
        generationId++;
        rebalances.increment();
        if (members.isEmpty()) {
            protocolName = null;
            emptySinceMs = nowMs;
            transitionTo(ClassicGroupState.EMPTY);
            return;
        }
        protocolName = selectProtocol();
        transitionTo(ClassicGroupState.COMPLETING_REBALANCE);
        for (ClassicGroupMember m : members.values()) {
            m.answerJoin(joinResult(m.memberId, m.memberId.equals(leaderId), false, leaderId));
            m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs;
            m.isNew = false;
            pendingSync.add(m.memberId);
        }
        syncDeadlineMs = nowMs + rebalanceTimeoutMs();
    }

    /** Keeps the leader if it rejoined, else picks one that did; false if none did. */
    boolean electJoinedLeader() {
        if (leaderId == null) {
            return false;
        }
        if (members.get(leaderId).awaitingJoin != null) {
            return true;
        }
        for (ClassicGroupMember m : members.values()) {
            if (m.awaitingJoin != null) {
                leaderId = m.memberId;
                return true;
            }
        }
        return false;
    }

    void remove(String memberId) {
        ClassicGroupMember m = members.remove(memberId);
        if (m == null) {
            pendingMembers.remove(memberId);
            return;
        }
        if (m.groupInstanceId != null) {
            staticMembers.remove(m.groupInstanceId);
        }
        pendingSync.remove(memberId);
        if (memberId.equals(leaderId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
    }

    /** Removes a member (left, expired or dropped), answering what it had parked, and rebalances. */
    void removeMemberAndRebalance(ClassicGroupMember m, long nowMs) {
        m.answerJoin(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, ""));
        m.answerSync(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        remove(m.memberId);
        if (state == ClassicGroupState.STABLE || state == ClassicGroupState.COMPLETING_REBALANCE) {
            prepareRebalance(nowMs);
        } else if (state == ClassicGroupState.PREPARING_REBALANCE && allMembersJoined()) {
            completeJoin(nowMs);
        }
    }

    // ------------------------------------------------------------------ Heartbeat, LeaveGroup





    Errors heartbeat(String memberId, String groupInstanceId, int generation, long nowMs) {
        if (state == ClassicGroupState.DEAD) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors invalid = validateMember(memberId, groupInstanceId);
        if (invalid != Errors.NONE) {
            return invalid;
        }
        if (generation != generationId) {
            return Errors.ILLEGAL_GENERATION;
        }
        ClassicGroupMember m = members.get(memberId);
        return switch (state) {
            case PREPARING_REBALANCE -> {
                m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs;
                yield Errors.REBALANCE_IN_PROGRESS;
            }
            case COMPLETING_REBALANCE, STABLE -> {
                m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs;
                yield Errors.NONE;
            }
            default -> Errors.UNKNOWN_MEMBER_ID;
        };
    }

    ClassicLeave.Result leave(List<ClassicLeave.Member> leaving, long nowMs) {
        if (state == ClassicGroupState.DEAD) {
            return new ClassicLeave.Result(Errors.COORDINATOR_NOT_AVAILABLE, List.of());
        }
        List<ClassicLeave.MemberResult> results = new ArrayList<>();
        boolean removed = false;
        for (ClassicLeave.Member l : leaving) {
            Errors error;
            if (l.memberId().isEmpty()) {
                // Administrative removal by instance id alone.
                String id = l.groupInstanceId() == null ? null : staticMembers.get(l.groupInstanceId());
                error = id == null ? Errors.UNKNOWN_MEMBER_ID : Errors.NONE;
                if (id != null) {
                    dropLeaving(members.get(id));
                }
            } else if (pendingMembers.remove(l.memberId()) != null) {
                error = Errors.NONE;
            } else {
                error = validateMember(l.memberId(), l.groupInstanceId());
                if (error == Errors.NONE) {
                    dropLeaving(members.get(l.memberId()));
                }
            }
            removed |= error == Errors.NONE;
            results.add(new ClassicLeave.MemberResult(l.memberId(), l.groupInstanceId(), error));
        }
        if (removed) {
            if (state == ClassicGroupState.STABLE || state == ClassicGroupState.COMPLETING_REBALANCE) {
                prepareRebalance(nowMs);
            } else {
                completeJoinIfAllJoined(nowMs);
            }
        }
        return new ClassicLeave.Result(Errors.NONE, results);
    }

    void dropLeaving(ClassicGroupMember m) {
        m.answerJoin(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, ""));
        m.answerSync(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        remove(m.memberId);
    }

    // ------------------------------------------------------------------ OffsetCommit, views

    /** Kafka's checks of a commit against a classic group. */
    Errors validateOffsetCommit(String memberId, String groupInstanceId, int generation, long nowMs) {
        if (state == ClassicGroupState.DEAD) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (generation < 0 && state == ClassicGroupState.EMPTY) {
            return Errors.NONE; // Admin, or a consumer that assigns partitions itself
        }
        if (generation >= 0 || !memberId.isEmpty() || groupInstanceId != null) {
            Errors invalid = validateMember(memberId, groupInstanceId);
            if (invalid != Errors.NONE) {
                return invalid;
            }
            if (generation != generationId) {
                return Errors.ILLEGAL_GENERATION;
            }
        } else if (state != ClassicGroupState.EMPTY) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (state == ClassicGroupState.COMPLETING_REBALANCE) {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        ClassicGroupMember m = members.get(memberId);
        if (m != null && (state == ClassicGroupState.STABLE || state == ClassicGroupState.PREPARING_REBALANCE)) {
            m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs; // a commit counts as a heartbeat
        }
        return Errors.NONE;
    }



    ClassicGroupDescription describe() {
        boolean stable = state == ClassicGroupState.STABLE;
        List<ClassicGroupDescription.Member> list = new ArrayList<>();
        for (ClassicGroupMember m : members.values()) {
            list.add(new ClassicGroupDescription.Member(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
                    stable ? m.metadata(protocolName) : new byte[0],
                    stable ? m.assignment : new byte[0]));
        }
        return new ClassicGroupDescription(groupId, state, protocolType == null ? "" : protocolType,
                stable ? protocolName : "", list);
    }

    /** The metadata each member sent for the chosen protocol (empty before the first generation). */
    List<byte[]> memberMetadata() {
        List<byte[]> all = new ArrayList<>();
        if (protocolName != null) {
            for (ClassicGroupMember m : members.values()) {
                all.add(m.metadata(protocolName));
            }
        }
        return all;
    }
}
