package io.pier.group;

import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.protocol.Errors;

/**
 * JoinGroup against one {@link ClassicGroup}: refusals with Kafka's codes, KIP-394's member id
 * round trip, new, known and static members (a static member back with a new id fences its old
 * one), then into the rebalance. Part of its group: same thread, no state of its own.
 */
final class ClassicJoinPhase {
    private final ClassicGroup g;

    ClassicJoinPhase(ClassicGroup group) {
        this.g = group;
    }

    void join(ClassicJoin req, String newMemberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        boolean unknown = req.memberId().isEmpty();
        if (!acceptsJoiningMember(req.memberId())) {
            reply.accept(ClassicJoinResult.error(Errors.GROUP_MAX_SIZE_REACHED, ""));
        } else if (g.state() == ClassicGroupState.DEAD) {
            reply.accept(ClassicJoinResult.error(Errors.COORDINATOR_NOT_AVAILABLE, unknown ? "" : req.memberId()));
        } else if (!supportsProtocols(req.protocolType(), req.protocols())) {
            reply.accept(ClassicJoinResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL, unknown ? "" : req.memberId()));
        } else if (oversized(req.protocols())) {
            // Kafka fails the group record's append (MESSAGE_TOO_LARGE) and answers UNKNOWN_SERVER_ERROR.
            reply.accept(ClassicJoinResult.error(Errors.UNKNOWN_SERVER_ERROR, unknown ? "" : req.memberId()));
        } else if (unknown) {
            joinNewMember(req, newMemberId, nowMs, reply);
        } else if (g.pendingMembers.containsKey(req.memberId())) {
            g.pendingMembers.remove(req.memberId());
            addMember(req, req.memberId(), nowMs, reply);
        } else {
            Errors invalid = g.validateMember(req.memberId(), req.groupInstanceId());
            if (invalid != Errors.NONE) {
                reply.accept(ClassicJoinResult.error(invalid, req.memberId()));
            } else {
                joinExistingMember(req, g.members.get(req.memberId()), nowMs, reply);
            }
        }
    }

    private void joinNewMember(ClassicJoin req, String newMemberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        if (req.groupInstanceId() != null) {
            String existing = g.staticMembers.get(req.groupInstanceId());
            if (existing != null) {
                rejoinStaticMember(req, existing, newMemberId, nowMs, reply);
            } else {
                addMember(req, newMemberId, nowMs, reply);
            }
        } else if (req.requireKnownMemberId()) {
            // KIP-394: the member must come back with this id, within its session timeout.
            g.pendingMembers.put(newMemberId, nowMs + req.sessionTimeoutMs());
            reply.accept(ClassicJoinResult.error(Errors.MEMBER_ID_REQUIRED, newMemberId));
        } else {
            addMember(req, newMemberId, nowMs, reply);
        }
    }

    private void joinExistingMember(ClassicJoin req, ClassicGroupMember member, long nowMs,
            Consumer<ClassicJoinResult> reply) {
        switch (g.state()) {
            case PREPARING_REBALANCE -> updateMemberThenRebalance(member, req, nowMs, reply);
            case COMPLETING_REBALANCE -> {
                if (member.matches(req.protocols())) {
                    // It lost the first answer: the same generation again.
                    reply.accept(g.joinResult(member.memberId, g.leaderId.equals(member.memberId), false, g.leaderId));
                } else {
                    updateMemberThenRebalance(member, req, nowMs, reply);
                }
            }
            case STABLE -> {
                if (member.memberId.equals(g.leaderId) || !member.matches(req.protocols())) {
                    // The leader rejoins to have topic changes reassigned; a changed subscription too.
                    updateMemberThenRebalance(member, req, nowMs, reply);
                } else {
                    reply.accept(g.joinResult(member.memberId, false, false, g.leaderId));
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
        String oldLeader = g.leaderId;
        ClassicGroupMember member = g.members.remove(oldMemberId);
        member.answerJoin(ClassicJoinResult.error(Errors.FENCED_INSTANCE_ID, oldMemberId));
        member.answerSync(ClassicSyncResult.error(Errors.FENCED_INSTANCE_ID));
        member.memberId = newMemberId;
        g.members.put(newMemberId, member);
        g.staticMembers.put(req.groupInstanceId(), newMemberId);
        if (oldMemberId.equals(g.leaderId)) {
            g.leaderId = newMemberId;
        }
        if (g.pendingSync.remove(oldMemberId)) {
            g.pendingSync.add(newMemberId);
        }
        member.heartbeatDeadlineMs = nowMs + member.sessionTimeoutMs;
        setProtocols(member, req);
        if (g.state() == ClassicGroupState.STABLE && g.protocolName.equals(g.selectProtocol())) {
            boolean leader = newMemberId.equals(g.leaderId);
            if (req.supportsSkipAssignment()) {
                reply.accept(g.joinResult(newMemberId, leader, leader, g.leaderId));
            } else {
                // Before v9 a rejoining static leader is told the old leader id, so it only syncs.
                reply.accept(g.joinResult(newMemberId, false, false, oldLeader));
            }
            return;
        }
        member.awaitingJoin = reply;
        if (g.state() == ClassicGroupState.COMPLETING_REBALANCE || g.state() == ClassicGroupState.STABLE) {
            // The leader may already have assigned the old id: rebalance so the new one gets partitions.
            g.prepareRebalance(nowMs);
        } else {
            g.completeJoinIfAllJoined(nowMs);
        }
    }

    private void addMember(ClassicJoin req, String memberId, long nowMs, Consumer<ClassicJoinResult> reply) {
        ClassicGroupMember member = new ClassicGroupMember(memberId, req);
        member.isNew = true;
        if (g.state() == ClassicGroupState.PREPARING_REBALANCE && g.previousState() == ClassicGroupState.EMPTY) {
            g.newMemberAdded = true;
        }
        if (g.members.isEmpty()) {
            g.protocolType = req.protocolType();
        }
        g.members.put(memberId, member);
        if (g.leaderId == null) {
            g.leaderId = memberId;
        }
        if (req.groupInstanceId() != null) {
            g.staticMembers.put(req.groupInstanceId(), memberId);
        }
        member.awaitingJoin = reply;
        // A parked new member cannot heartbeat; its join is dropped after the new-member timeout.
        member.heartbeatDeadlineMs = nowMs + g.config.newMemberJoinTimeoutMs();
        g.rebalanceOrCompleteJoin(nowMs);
    }

    private void updateMemberThenRebalance(ClassicGroupMember member, ClassicJoin req, long nowMs,
            Consumer<ClassicJoinResult> reply) {
        setProtocols(member, req);
        // A repeated JoinGroup replaces one the client gave up on; that one is still answered.
        member.answerJoin(ClassicJoinResult.error(Errors.REBALANCE_IN_PROGRESS, member.memberId));
        member.awaitingJoin = reply;
        g.rebalanceOrCompleteJoin(nowMs);
    }

    private static void setProtocols(ClassicGroupMember member, ClassicJoin req) {
        member.protocols = List.copyOf(req.protocols());
        member.rebalanceTimeoutMs = req.rebalanceTimeoutMs();
        member.sessionTimeoutMs = req.sessionTimeoutMs();
    }

    /** Whether one of these protocols' metadata alone would not fit the group's record. */
    private boolean oversized(List<ClassicProtocol> protocols) {
        for (ClassicProtocol p : protocols) {
            if (p.metadata() != null && p.metadata().length > g.config.maxGroupRecordBytes()) {
                return true;
            }
        }
        return false;
    }

    private boolean acceptsJoiningMember(String memberId) {
        return switch (g.state()) {
            case EMPTY, DEAD -> true;
            case PREPARING_REBALANCE ->
                    (g.members.containsKey(memberId) && g.members.get(memberId).awaitingJoin != null)
                            || awaitingJoinCount() < g.config.maxSize();
            case COMPLETING_REBALANCE, STABLE ->
                    g.members.containsKey(memberId) || g.members.size() < g.config.maxSize();
        };
    }

    private int awaitingJoinCount() {
        int n = 0;
        for (ClassicGroupMember m : g.members.values()) {
            n += m.awaitingJoin != null ? 1 : 0;
        }
        return n;
    }

    private boolean supportsProtocols(String type, List<ClassicProtocol> protocols) {
        if (g.state() == ClassicGroupState.EMPTY) {
            return type != null && !type.isEmpty() && !protocols.isEmpty();
        }
        if (g.protocolType == null || !g.protocolType.equals(type)) {
            return false;
        }
        for (ClassicProtocol p : protocols) {
            if (g.members.values().stream().allMatch(m -> m.supports(p.name()))) {
                return true;
            }
        }
        return false;
    }
}
