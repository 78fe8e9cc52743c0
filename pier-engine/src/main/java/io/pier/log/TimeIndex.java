package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Sparse time index of one segment: entries (T, offset relative to the segment base) with
 * strictly increasing T, meaning "every record up to and including this offset has a timestamp
 * at most T". A timestamp lookup therefore skips everything up to the last entry whose T is below
 * the target, whatever order producers used for their timestamps.
 *
 * <p>Mirrored to the {@code .timeindex} file as 12-byte big-endian (timestamp, relative offset)
 * pairs; see {@link SparseIndex}.
 */
final class TimeIndex extends SparseIndex {
    static final int ENTRY_SIZE = 12;

    private long[] timestamps = new long[INITIAL_CAPACITY];
    private int[] relativeOffsets = new int[INITIAL_CAPACITY];

    TimeIndex(long baseOffset, IndexFile file, boolean mirror) {
        super(baseOffset, file, ENTRY_SIZE, mirror);
    }

    /** Adds (maxTimestampSoFar, lastOffset) unless it would not raise the newest entry's timestamp. */
    void maybeAppend(long maxTimestampSoFar, long lastOffset) throws IOException {
        int last = entries() - 1;
        if (last >= 0 && maxTimestampSoFar <= timestamps[last]) {
            return;
        }
        add(maxTimestampSoFar, relative(lastOffset));
    }

    /**
     * The smallest offset that can hold a record with timestamp {@code >= timestampMs}: one past
     * the last entry whose timestamp is below the target, or the segment base offset.
     */
    long firstCandidateOffset(long timestampMs) {
        int found = lastEntryBelow(timestampMs, false);
        return found < 0 ? baseOffset : baseOffset + relativeOffsets[found] + 1;
    }

    @Override
    long keyAt(int i) {
        return timestamps[i];
    }

    @Override
    void store(int i, long key, int value) {
        if (i == timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, i * 2);
            relativeOffsets = Arrays.copyOf(relativeOffsets, i * 2);
        }
        timestamps[i] = key;
        relativeOffsets[i] = value;
    }

    @Override
    void encode(int i, ByteBuffer dst) {
        dst.putLong(timestamps[i]).putInt(relativeOffsets[i]);
    }
}
