package io.pier.group;

import java.util.ArrayList;
import java.util.List;

/**
 * The deadlines of one {@link ClassicGroup}, all on the clock its owner passes in: member sessions
 * (pending members' too), the end of the join phase (the initial delay, extended while members
 * keep coming, within the rebalance timeout) and of the sync phase. Part of its group: same
 * thread, no state of its own.
 */
final class ClassicGroupDeadlines {
    private final ClassicGroup g;

    ClassicGroupDeadlines(ClassicGroup group) {
        this.g = group;
    }

    long nextDeadlineMs() {
        long next = Math.min(g.joinDeadlineMs, g.syncDeadlineMs);
        for (ClassicGroupMember m : g.members.values()) {
            next = Math.min(next, m.heartbeatDeadlineMs);
        }
        for (long d : g.pendingMembers.values()) {
            next = Math.min(next, d);
        }
        return next;
    }

    /** Runs whatever is due at {@code nowMs}: session expiries, the end of a join or sync phase. */
    void onDeadlines(long nowMs) {
        List<String> expiredPending = new ArrayList<>();
        g.pendingMembers.forEach((id, d) -> {
            if (d <= nowMs) {
                expiredPending.add(id);
            }
        });
        for (String id : expiredPending) {
            g.pendingMembers.remove(id);
            g.completeJoinIfAllJoined(nowMs);
        }
        for (ClassicGroupMember m : new ArrayList<>(g.members.values())) {
            if (g.members.get(m.memberId) == m && m.heartbeatDeadlineMs <= nowMs) {
                if (m.isNew || (m.awaitingJoin == null && m.awaitingSync == null)) {
                    g.removeMemberAndRebalance(m, nowMs);
                } else {
                    m.heartbeatDeadlineMs = Long.MAX_VALUE; // parked: the join or sync phase decides
                }
            }
        }
        if (g.joinDeadlineMs <= nowMs && g.state() == ClassicGroupState.PREPARING_REBALANCE) {
            if (g.initialJoin && g.newMemberAdded && g.initialRemainingMs > 0) {
                // More g.members came during the initial delay: wait again, within the rebalance timeout.
                g.newMemberAdded = false;
                int delay = Math.min(g.config.initialRebalanceDelayMs(), g.initialRemainingMs);
                g.initialRemainingMs = Math.max(g.initialRemainingMs - g.config.initialRebalanceDelayMs(), 0);
                g.joinDeadlineMs = nowMs + delay;
            } else {
                g.completeJoin(nowMs);
            }
        }
        if (g.syncDeadlineMs <= nowMs) {
            g.syncDeadlineMs = Long.MAX_VALUE;
            if (!g.pendingSync.isEmpty() && (g.state() == ClassicGroupState.COMPLETING_REBALANCE
                    || g.state() == ClassicGroupState.STABLE)) {
                for (String id : new ArrayList<>(g.pendingSync)) {
                    ClassicGroupMember m = g.members.get(id);
                    if (m != null) {
                        g.dropLeaving(m);
                    }
                }
                g.prepareRebalance(nowMs);
            }
        }
    }
}
