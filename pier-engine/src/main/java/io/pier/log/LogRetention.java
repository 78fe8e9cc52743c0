package io.pier.log;

import java.io.IOException;
import java.util.NavigableMap;
import java.util.function.Predicate;

/**
 * Deletes a {@link PartitionLog}'s oldest segments for DeleteRecords, retention.ms and
 * retention.bytes. Segments go strictly oldest first, and never one that holds offsets at or
 * above the high watermark, nor the newest (active) segment. The caller moves the log start
 * offset and makes the deletions durable. Owned by the log's thread.
 */
final class LogRetention {
    private final NavigableMap<Long, LogSegment> segments;

    /** {@code segments} is the log's live segment map; deleted segments are removed from it. */
    LogRetention(NavigableMap<Long, LogSegment> segments) {
        this.segments = segments;
    }

    /** Deletes the segments wholly below {@code offset}. */
    boolean deleteBelow(long offset, long highWatermark) throws IOException {
        return deleteOldest(highWatermark, seg -> segments.higherKey(seg.baseOffset()) <= offset);
    }

    /** Deletes the oldest segments whose newest timestamp is more than {@code retentionMs} old. */
    boolean deleteOlderThan(long retentionMs, long nowWallMs, long highWatermark) throws IOException {
        return deleteOldest(highWatermark, seg -> seg.isEmpty() || nowWallMs - seg.maxTimestamp() > retentionMs);
    }

    /** Deletes the oldest segments while together they are no larger than {@code excessBytes}. */
    boolean deleteBeyondBytes(long excessBytes, long highWatermark) throws IOException {
        long[] excess = {excessBytes};
        return deleteOldest(highWatermark, seg -> {
            if (excess[0] >= seg.size()) {
                excess[0] -= seg.size();
                return true;
            }
            return false;
        });
    }

    /** Deletes segments from the oldest while {@code eligible} holds; stops at the first that does not. */
    private boolean deleteOldest(long highWatermark, Predicate<LogSegment> eligible) throws IOException {
        boolean deleted = false;
        // The newest segment is the active one: it always stays.
        while (segments.size() > 1) {
            LogSegment first = segments.firstEntry().getValue();
            Long next = segments.higherKey(first.baseOffset());
            if (next > highWatermark || !eligible.test(first)) {
                break;
            }
            segments.pollFirstEntry();
            first.closeAndDelete();
            deleted = true;
        }
        return deleted;
    }
}
