package io.pier.share;

/**
 * One acquisition lock: a deadline covering {@code firstOffset..lastOffset}. Each offset of the
 * window points at the lock that currently guards it; {@code liveOffsets} counts those pointers,
 * so a lock whose offsets were all settled, renewed or dropped is known dead without a scan.
 * {@code heldUpSinceMs} is when a fetch of the holder first found its records of this lock holding
 * a full window up (-1: never), see {@link SharePartition#heldUpByMs}.
 */
final class AcquisitionLock {
    final long firstOffset;
    final long lastOffset;
    final long deadlineMs;
    final long sequence;
    int liveOffsets;
    long heldUpSinceMs = -1;

    AcquisitionLock(long firstOffset, long lastOffset, long deadlineMs, long sequence) {
        this.firstOffset = firstOffset;
        this.lastOffset = lastOffset;
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
