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
 * clock ({@code nowMs} comes with every call).
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
    private final ClassicGroupConfig config;
    private ClassicGroupState state = ClassicGroupState.EMPTY;
    private ClassicGroupState previousState = ClassicGroupState.EMPTY;
    private int generationId;
    private String protocolType;
    private String protocolName;
    private String leaderId;
    private final LinkedHashMap<String, ClassicGroupMember> members = new LinkedHashMap<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    /** Members given an id (MEMBER_ID_REQUIRED) that have not joined with it yet, to their deadline. */
    private final Map<String, Long> pendingMembers = new HashMap<>();
    private final Set<String> pendingSync = new HashSet<>();
    private long joinDeadlineMs = Long.MAX_VALUE;
    private boolean initialJoin;
    private int initialRemainingMs;
    private boolean newMemberAdded;
    private long syncDeadlineMs = Long.MAX_VALUE;

    ClassicGroup(String groupId, ClassicGroupConfig config) {
        this.groupId = groupId;
        this.config = config;
    }

    ClassicGroupState state() {
        return state;
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
    private void transitionTo(ClassicGroupState next) {
        if (!state.canTransitionTo(next)) {
            throw new IllegalStateException("group " + groupId + " cannot go from " + state + " to " + next);
        }
        previousState = state;
        state = next;
    }

    void markDead() {
        transitionTo(ClassicGroupState.DEAD);
    }

    // ------------------------------------------------------------------ JoinGroup

    void join(ClassicJoin req, String newMemberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        boolean unknown = req.memberId().isEmpty();
        if (!acceptsJoiningMember(req.memberId())) {
            reply.accept(ClassicJoinResult.error(Errors.GROUP_MAX_SIZE_REACHED, ""));
        } else if (state == ClassicGroupState.DEAD) {
            reply.accept(ClassicJoinResult.error(Errors.COORDINATOR_NOT_AVAILABLE, unknown ? "" : req.memberId()));
        } else if (!supportsProtocols(req.protocolType(), req.protocols())) {
            reply.accept(ClassicJoinResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL, unknown ? "" : req.memberId()));
        } else if (oversized(req.protocols())) {
            // Kafka fails the group record's append (MESSAGE_TOO_LARGE) and answers UNKNOWN_SERVER_ERROR.
            reply.accept(ClassicJoinResult.error(Errors.UNKNOWN_SERVER_ERROR, unknown ? "" : req.memberId()));
        } else if (unknown) {
            joinNewMember(req, newMemberId, nowMs, reply);
        } else if (pendingMembers.containsKey(req.memberId())) {
            pendingMembers.remove(req.memberId());
            addMember(req, req.memberId(), nowMs, reply);
        } else {
            Errors invalid = validateMember(req.memberId(), req.groupInstanceId());
            if (invalid != Errors.NONE) {
                reply.accept(ClassicJoinResult.error(invalid, req.memberId()));
            } else {
                joinExistingMember(req, members.get(req.memberId()), nowMs, reply);
            }
        }
    }

    private void joinNewMember(ClassicJoin req, String newMemberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        if (req.groupInstanceId() != null) {
            String existing = staticMembers.get(req.groupInstanceId());
            if (existing != null) {
                rejoinStaticMember(req, existing, newMemberId, nowMs, reply);
            } else {
                addMember(req, newMemberId, nowMs, reply);
            }
        } else if (req.requireKnownMemberId()) {
            // KIP-394: the member must come back with this id, within its session timeout.
            pendingMembers.put(newMemberId, nowMs + req.sessionTimeoutMs());
            reply.accept(ClassicJoinResult.error(Errors.MEMBER_ID_REQUIRED, newMemberId));
        } else {
            addMember(req, newMemberId, nowMs, reply);
        }
    }

    private void joinExistingMember(ClassicJoin req, ClassicGroupMember member, long nowMs,
            Consumer<ClassicJoinResult> reply) {
        switch (state) {
            case PREPARING_REBALANCE -> updateMemberThenRebalance(member, req, nowMs, reply);
            case COMPLETING_REBALANCE -> {
                if (member.matches(req.protocols())) {
                    // It lost the first answer: the same generation again.
                    reply.accept(joinResult(member.memberId, leaderId.equals(member.memberId), false, leaderId));
                } else {
                    updateMemberThenRebalance(member, req, nowMs, reply);
                }
            }
            case STABLE -> {
                if (member.memberId.equals(leaderId) || !member.matches(req.protocols())) {
                    // The leader rejoins to have topic changes reassigned; a changed subscription too.
                    updateMemberThenRebalance(member, req, nowMs, reply);
                } else {
                    reply.accept(joinResult(member.memberId, false, false, leaderId));
                }
            }
            default -> reply.accept(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, member.memberId));
        }
    }

    /**
     * A static member back with a new member id: it takes over its old id's place (the old one is
     * fenced); while Stable with an unchanged protocol it gets the current generation at once.
     */
    private void rejoinStaticMember(ClassicJoin req, String oldMemberId, String newMemberId, long nowMs,
            Consumer<ClassicJoinResult> reply) {
        String oldLeader = leaderId;
        ClassicGroupMember member = members.remove(oldMemberId);
        member.answerJoin(ClassicJoinResult.error(Errors.FENCED_INSTANCE_ID, oldMemberId));
        member.answerSync(ClassicSyncResult.error(Errors.FENCED_INSTANCE_ID));
        member.memberId = newMemberId;
        members.put(newMemberId, member);
        staticMembers.put(req.groupInstanceId(), newMemberId);
        if (oldMemberId.equals(leaderId)) {
            leaderId = newMemberId;
        }
        if (pendingSync.remove(oldMemberId)) {
            pendingSync.add(newMemberId);
        }
        member.heartbeatDeadlineMs = nowMs + member.sessionTimeoutMs;
        setProtocols(member, req);
        if (state == ClassicGroupState.STABLE && protocolName.equals(selectProtocol())) {
            boolean leader = newMemberId.equals(leaderId);
            if (req.supportsSkipAssignment()) {
                reply.accept(joinResult(newMemberId, leader, leader, leaderId));
            } else {
                // Before v9 a rejoining static leader is told the old leader id, so it only syncs.
                reply.accept(joinResult(newMemberId, false, false, oldLeader));
            }
            return;
        }
        member.awaitingJoin = reply;
        if (state == ClassicGroupState.COMPLETING_REBALANCE || state == ClassicGroupState.STABLE) {
            // The leader may already have assigned the old id: rebalance so the new one gets partitions.
            prepareRebalance(nowMs);
        } else {
            completeJoinIfAllJoined(nowMs);
        }
    }

    private void addMember(ClassicJoin req, String memberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        ClassicGroupMember member = new ClassicGroupMember(memberId, req);
        member.isNew = true;
        if (state == ClassicGroupState.PREPARING_REBALANCE && previousState == ClassicGroupState.EMPTY) {
            newMemberAdded = true;
        }
        if (members.isEmpty()) {
            protocolType = req.protocolType();
        }
        members.put(memberId, member);
        if (leaderId == null) {
            leaderId = memberId;
        }
        if (req.groupInstanceId() != null) {
            staticMembers.put(req.groupInstanceId(), memberId);
        }
        member.awaitingJoin = reply;
        // A parked new member cannot heartbeat; its join is dropped after the new-member timeout.
        member.heartbeatDeadlineMs = nowMs + config.newMemberJoinTimeoutMs();
        rebalanceOrCompleteJoin(nowMs);
    }

    private void updateMemberThenRebalance(ClassicGroupMember member, ClassicJoin req, long nowMs,
            Consumer<ClassicJoinResult> reply) {
        setProtocols(member, req);
        // A repeated JoinGroup replaces one the client gave up on; that one is still answered.
        member.answerJoin(ClassicJoinResult.error(Errors.REBALANCE_IN_PROGRESS, member.memberId));
        member.awaitingJoin = reply;
        rebalanceOrCompleteJoin(nowMs);
    }

    private static void setProtocols(ClassicGroupMember member, ClassicJoin req) {
        member.protocols = List.copyOf(req.protocols());
        member.rebalanceTimeoutMs = req.rebalanceTimeoutMs();
        member.sessionTimeoutMs = req.sessionTimeoutMs();
    }

    private ClassicJoinResult joinResult(String memberId, boolean withMembers, boolean skipAssignment,
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

    /** Whether one of these protocols' metadata alone would not fit the group's record. */
    private boolean oversized(List<ClassicProtocol> protocols) {
        for (ClassicProtocol p : protocols) {
            if (p.metadata() != null && p.metadata().length > config.maxGroupRecordBytes()) {
                return true;
            }
        }
        return false;
    }

    /** Whether the members' chosen-protocol metadata and these assignments exceed one group record. */
    private boolean oversized(Map<String, byte[]> assignments) {
        long bytes = 0;
        for (ClassicGroupMember m : members.values()) {
            byte[] a = assignments.get(m.memberId);
            byte[] metadata = m.metadata(protocolName);
            bytes += (metadata == null ? 0 : metadata.length) + (a == null ? 0 : a.length);
        }
        return bytes > config.maxGroupRecordBytes();
    }

    private boolean acceptsJoiningMember(String memberId) {
        return switch (state) {
            case EMPTY, DEAD -> true;
            case PREPARING_REBALANCE -> (members.containsKey(memberId) && members.get(memberId).awaitingJoin != null)
                    || awaitingJoinCount() < config.maxSize();
            case COMPLETING_REBALANCE, STABLE -> members.containsKey(memberId) || members.size() < config.maxSize();
        };
    }

    private int awaitingJoinCount() {
        int n = 0;
        for (ClassicGroupMember m : members.values()) {
            n += m.awaitingJoin != null ? 1 : 0;
        }
        return n;
    }

    private boolean supportsProtocols(String type, List<ClassicProtocol> protocols) {
        if (state == ClassicGroupState.EMPTY) {
            return type != null && !type.isEmpty() && !protocols.isEmpty();
        }
        if (protocolType == null || !protocolType.equals(type)) {
            return false;
        }
        for (ClassicProtocol p : protocols) {
            if (members.values().stream().allMatch(m -> m.supports(p.name()))) {
                return true;
            }
        }
        return false;
    }

    /** The protocol every member supports that most members prefer (ties: the earliest member's). */
    private String selectProtocol() {
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

    private int rebalanceTimeoutMs() {
        int max = 0;
        for (ClassicGroupMember m : members.values()) {
            max = Math.max(max, m.rebalanceTimeoutMs);
        }
        return max;
    }

    private void rebalanceOrCompleteJoin(long nowMs) {
        if (state == ClassicGroupState.STABLE || state == ClassicGroupState.COMPLETING_REBALANCE
                || state == ClassicGroupState.EMPTY) {
            prepareRebalance(nowMs);
        } else {
            completeJoinIfAllJoined(nowMs);
        }
    }

    private void prepareRebalance(long nowMs) {
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

    private boolean allMembersJoined() {
        return pendingMembers.isEmpty() && members.values().stream().allMatch(m -> m.awaitingJoin != null);
    }

    private void completeJoinIfAllJoined(long nowMs) {
        if (state == ClassicGroupState.PREPARING_REBALANCE && previousState != ClassicGroupState.EMPTY
                && allMembersJoined()) {
            completeJoin(nowMs);
        }
    }

    /** Ends the join phase: drops who did not rejoin, starts the next generation, answers the joins. */
    private void completeJoin(long nowMs) {
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
        if (members.isEmpty()) {
            protocolName = null;
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
    private boolean electJoinedLeader() {
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

    private void remove(String memberId) {
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
    private void removeMemberAndRebalance(ClassicGroupMember m, long nowMs) {
        m.answerJoin(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, ""));
        m.answerSync(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        remove(m.memberId);
        if (state == ClassicGroupState.STABLE || state == ClassicGroupState.COMPLETING_REBALANCE) {
            prepareRebalance(nowMs);
        } else if (state == ClassicGroupState.PREPARING_REBALANCE && allMembersJoined()) {
            completeJoin(nowMs);
        }
    }

    // ------------------------------------------------------------------ SyncGroup, Heartbeat, LeaveGroup

    void sync(ClassicSync req, long nowMs, Consumer<ClassicSyncResult> reply) {
        Errors error = syncError(req);
        if (error != Errors.NONE) {
            reply.accept(ClassicSyncResult.error(error));
            return;
        }
        ClassicGroupMember member = members.get(req.memberId());
        switch (state) {
            case PREPARING_REBALANCE -> reply.accept(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
            case COMPLETING_REBALANCE -> {
                if (req.memberId().equals(leaderId) && oversized(req.assignments())) {
                    // As Kafka: the group record cannot be written, so nothing changes; the leader may retry.
                    reply.accept(ClassicSyncResult.error(Errors.UNKNOWN_SERVER_ERROR));
                    return;
                }
                member.answerSync(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
                member.awaitingSync = reply;
                syncedBy(req.memberId());
                if (req.memberId().equals(leaderId)) {
                    for (ClassicGroupMember m : members.values()) {
                        byte[] a = req.assignments().get(m.memberId);
                        m.assignment = a == null ? ClassicSyncResult.EMPTY_ASSIGNMENT : a;
                    }
                    transitionTo(ClassicGroupState.STABLE);
                    for (ClassicGroupMember m : members.values()) {
                        if (m.awaitingSync != null) {
                            m.answerSync(new ClassicSyncResult(Errors.NONE, protocolType, protocolName, m.assignment));
                            m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs;
                        }
                    }
                }
            }
            case STABLE -> {
                syncedBy(req.memberId());
                reply.accept(new ClassicSyncResult(Errors.NONE, protocolType, protocolName, member.assignment));
            }
            default -> reply.accept(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        }
    }

    private Errors syncError(ClassicSync req) {
        if (state == ClassicGroupState.EMPTY) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (state == ClassicGroupState.DEAD) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors invalid = validateMember(req.memberId(), req.groupInstanceId());
        if (invalid != Errors.NONE) {
            return invalid;
        }
        if (req.generationId() != generationId) {
            return Errors.ILLEGAL_GENERATION;
        }
        if (inconsistent(req.protocolType(), protocolType) || inconsistent(req.protocolName(), protocolName)) {
            return Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        return Errors.NONE;
    }

    private static boolean inconsistent(String requested, String known) {
        return requested != null && !requested.equals(known);
    }

    private void syncedBy(String memberId) {
        pendingSync.remove(memberId);
        if (pendingSync.isEmpty()) {
            syncDeadlineMs = Long.MAX_VALUE;
        }
    }

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

    private void dropLeaving(ClassicGroupMember m) {
        m.answerJoin(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, ""));
        m.answerSync(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        remove(m.memberId);
    }

    // ------------------------------------------------------------------ OffsetCommit, deadlines, views

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

    long nextDeadlineMs() {
        long next = Math.min(joinDeadlineMs, syncDeadlineMs);
        for (ClassicGroupMember m : members.values()) {
            next = Math.min(next, m.heartbeatDeadlineMs);
        }
        for (long d : pendingMembers.values()) {
            next = Math.min(next, d);
        }
        return next;
    }

    /** Runs whatever is due at {@code nowMs}: session expiries, the end of a join or sync phase. */
    void onDeadlines(long nowMs) {
        List<String> expiredPending = new ArrayList<>();
        pendingMembers.forEach((id, d) -> {
            if (d <= nowMs) {
                expiredPending.add(id);
            }
        });
        for (String id : expiredPending) {
            pendingMembers.remove(id);
            completeJoinIfAllJoined(nowMs);
        }
        for (ClassicGroupMember m : new ArrayList<>(members.values())) {
            if (members.get(m.memberId) == m && m.heartbeatDeadlineMs <= nowMs) {
                if (m.isNew || (m.awaitingJoin == null && m.awaitingSync == null)) {
                    removeMemberAndRebalance(m, nowMs);
                } else {
                    m.heartbeatDeadlineMs = Long.MAX_VALUE; // parked: the join or sync phase decides
                }
            }
        }
        if (joinDeadlineMs <= nowMs && state == ClassicGroupState.PREPARING_REBALANCE) {
            if (initialJoin && newMemberAdded && initialRemainingMs > 0) {
                // More members came during the initial delay: wait again, within the rebalance timeout.
                newMemberAdded = false;
                int delay = Math.min(config.initialRebalanceDelayMs(), initialRemainingMs);
                initialRemainingMs = Math.max(initialRemainingMs - config.initialRebalanceDelayMs(), 0);
                joinDeadlineMs = nowMs + delay;
            } else {
                completeJoin(nowMs);
            }
        }
        if (syncDeadlineMs <= nowMs) {
            syncDeadlineMs = Long.MAX_VALUE;
            if (!pendingSync.isEmpty() && (state == ClassicGroupState.COMPLETING_REBALANCE
                    || state == ClassicGroupState.STABLE)) {
                for (String id : new ArrayList<>(pendingSync)) {
                    ClassicGroupMember m = members.get(id);
                    if (m != null) {
                        dropLeaving(m);
                    }
                }
                prepareRebalance(nowMs);
            }
        }
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
