package io.pier.share;

/**
 * One acquisition lock: a deadline covering {@code firstOffset..lastOffset}, armed at
 * {@code armedMs} (acquisition or renewal). Each offset of the window points at the lock that
 * currently guards it; {@code liveOffsets} counts those pointers, so a lock whose offsets were all
 * settled, renewed or dropped is known dead without a scan.
 */
final class AcquisitionLock {
    final long firstOffset;
    final long lastOffset;
    final long armedMs;
    final long deadlineMs;
    final long sequence;
    int liveOffsets;

    AcquisitionLock(long firstOffset, long lastOffset, long armedMs, long deadlineMs, long sequence) {
        this.firstOffset = firstOffset;
        this.lastOffset = lastOffset;
        this.armedMs = armedMs;
        this.deadlineMs = deadlineMs;
        this.sequence = sequence;
    }

    boolean isLive() {
        return liveOffsets > 0;
    }

    @Override
    public String toString() {
        return "Lock[" + firstOffset + ".." + lastOffset + " @" + deadlineMs + " live=" + liveOffsets + "]";
    }
}
