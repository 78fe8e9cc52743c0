package io.pier.group;

import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.common.protocol.Errors;

/**
 * SyncGroup against one {@link ClassicGroup}: checks of member, generation and protocol; followers
 * park until the leader's assignment comes, which makes the group Stable and answers them all.
 * Part of its group: same thread, no state of its own.
 */
final class ClassicSyncPhase {
    private final ClassicGroup g;

    ClassicSyncPhase(ClassicGroup group) {
        this.g = group;
    }

    void sync(ClassicSync req, long nowMs, Consumer<ClassicSyncResult> reply) {
        Errors error = syncError(req);
        if (error != Errors.NONE) {
            reply.accept(ClassicSyncResult.error(error));
            return;
        }
        ClassicGroupMember member = g.members.get(req.memberId());
        switch (g.state()) {
            case PREPARING_REBALANCE -> reply.accept(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
            case COMPLETING_REBALANCE -> {
                if (req.memberId().equals(g.leaderId) && oversized(req.assignments())) {
                    // As Kafka: the group record cannot be written, so nothing changes; the leader may retry.
                    reply.accept(ClassicSyncResult.error(Errors.UNKNOWN_SERVER_ERROR));
                    return;
                }
                member.answerSync(ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS));
                member.awaitingSync = reply;
                syncedBy(req.memberId());
                if (req.memberId().equals(g.leaderId)) {
                    for (ClassicGroupMember m : g.members.values()) {
                        byte[] a = req.assignments().get(m.memberId);
                        m.assignment = a == null ? ClassicSyncResult.EMPTY_ASSIGNMENT : a;
                    }
                    g.transitionTo(ClassicGroupState.STABLE);
                    for (ClassicGroupMember m : g.members.values()) {
                        if (m.awaitingSync != null) {
                            m.answerSync(new ClassicSyncResult(Errors.NONE, g.protocolType, g.protocolName,
                                    m.assignment));
                            m.heartbeatDeadlineMs = nowMs + m.sessionTimeoutMs;
                        }
                    }
                }
            }
            case STABLE -> {
                syncedBy(req.memberId());
                reply.accept(new ClassicSyncResult(Errors.NONE, g.protocolType, g.protocolName, member.assignment));
            }
            default -> reply.accept(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        }
    }

    private Errors syncError(ClassicSync req) {
        if (g.state() == ClassicGroupState.EMPTY) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (g.state() == ClassicGroupState.DEAD) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors invalid = g.validateMember(req.memberId(), req.groupInstanceId());
        if (invalid != Errors.NONE) {
            return invalid;
        }
        if (req.generationId() != g.generationId) {
            return Errors.ILLEGAL_GENERATION;
        }
        if (inconsistent(req.protocolType(), g.protocolType) || inconsistent(req.protocolName(), g.protocolName)) {
            return Errors.INCONSISTENT_GROUP_PROTOCOL;
        }
        return Errors.NONE;
    }

    private static boolean inconsistent(String requested, String known) {
        return requested != null && !requested.equals(known);
    }

    private void syncedBy(String memberId) {
        g.pendingSync.remove(memberId);
        if (g.pendingSync.isEmpty()) {
            g.syncDeadlineMs = Long.MAX_VALUE;
        }
    }

    /** Whether the g.members' chosen-protocol metadata and these assignments exceed one group record. */
    private boolean oversized(Map<String, byte[]> assignments) {
        long bytes = 0;
        for (ClassicGroupMember m : g.members.values()) {
            byte[] a = assignments.get(m.memberId);
            byte[] metadata = m.metadata(g.protocolName);
            bytes += (metadata == null ? 0 : metadata.length) + (a == null ? 0 : a.length);
        }
        return bytes > g.config.maxGroupRecordBytes();
    }
}
