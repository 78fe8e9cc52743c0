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
 * <p>Entries live in memory (rebuilt from the log on open) and are mirrored to the
 * {@code .timeindex} file as 12-byte big-endian (timestamp, relative offset) pairs. Owned by the
 * log's thread.
 */
final class TimeIndex {
    static final int ENTRY_SIZE = 12;

    private final long baseOffset;
    private final IndexFile file;
    private long[] timestamps = new long[16];
    private int[] relativeOffsets = new int[16];
    private int entries;
    private boolean mirror;

    TimeIndex(long baseOffset, IndexFile file, boolean mirror) {
        this.baseOffset = baseOffset;
        this.file = file;
        this.mirror = mirror;
    }

    /** Adds (maxTimestampSoFar, lastOffset) unless it would not raise the newest entry's timestamp. */
    void maybeAppend(long maxTimestampSoFar, long lastOffset) throws IOException {
        if (entries > 0 && maxTimestampSoFar <= timestamps[entries - 1]) {
            return;
        }
        int rel = Math.toIntExact(lastOffset - baseOffset);
        if (entries == timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, entries * 2);
            relativeOffsets = Arrays.copyOf(relativeOffsets, entries * 2);
        }
        timestamps[entries] = maxTimestampSoFar;
        relativeOffsets[entries] = rel;
        entries++;
        if (mirror) {
            file.append(ByteBuffer.allocate(ENTRY_SIZE).putLong(maxTimestampSoFar).putInt(rel).flip());
        }
    }

    /**
     * The smallest offset that can hold a record with timestamp {@code >= timestampMs}: one past
     * the last entry whose timestamp is below the target, or the segment base offset.
     */
    long firstCandidateOffset(long timestampMs) {
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (timestamps[mid] < timestampMs) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? baseOffset : baseOffset + relativeOffsets[found] + 1;
    }

    int entries() {
        return entries;
    }

    void persist() throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(entries * ENTRY_SIZE);
        for (int i = 0; i < entries; i++) {
            buf.putLong(timestamps[i]).putInt(relativeOffsets[i]);
        }
        file.replaceWith(buf.flip());
        mirror = true;
    }

    void closeFile() throws IOException {
        file.close();
    }

    void deleteFile() throws IOException {
        file.delete();
    }
}
