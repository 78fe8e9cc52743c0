package io.pier.share;

import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * The acquisition locks of one share-partition ordered by deadline, so expiry costs nothing when
 * nothing is due. Dead locks (no offset points at them any more) are discarded lazily when they
 * reach the head.
 */
final class LockDeadlines {
    private final PriorityQueue<AcquisitionLock> queue = new PriorityQueue<>(
            Comparator.comparingLong((AcquisitionLock l) -> l.deadlineMs)
                    .thenComparingLong(l -> l.sequence));
    private long nextSequence;

    AcquisitionLock arm(long firstOffset, long lastOffset, long deadlineMs) {
        AcquisitionLock lock = new AcquisitionLock(firstOffset, lastOffset, deadlineMs, nextSequence++);
        queue.add(lock);
        return lock;
    }

    /** Earliest deadline of a live lock, or {@link Long#MAX_VALUE}. */
    long nextDeadlineMs() {
        dropDeadHeads();
        AcquisitionLock head = queue.peek();
        return head == null ? Long.MAX_VALUE : head.deadlineMs;
    }

    /** Removes and returns a live lock whose deadline is at or before {@code nowMs}, or null. */
    AcquisitionLock pollExpired(long nowMs) {
        dropDeadHeads();
        AcquisitionLock head = queue.peek();
        if (head == null || head.deadlineMs > nowMs) {
            return null;
        }
        return queue.poll();
    }

    private void dropDeadHeads() {
        while (!queue.isEmpty() && !queue.peek().isLive()) {
            queue.poll();
        }
    }
}
