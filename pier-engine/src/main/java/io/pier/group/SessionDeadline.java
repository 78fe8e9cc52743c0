package io.pier.group;

import java.util.Comparator;

/** When a member's session ends unless it heartbeats; ordered by deadline, then group and member. */
record SessionDeadline(long deadlineMs, String groupId, String memberId)
        implements Comparable<SessionDeadline> {

    private static final Comparator<SessionDeadline> ORDER = Comparator.comparingLong(SessionDeadline::deadlineMs)
            .thenComparing(SessionDeadline::groupId)
            .thenComparing(SessionDeadline::memberId);

    @Override
    public int compareTo(SessionDeadline other) {
        return ORDER.compare(this, other);
    }
}
