package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.NavigableMap;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;

/**
 * The read side of a {@link PartitionLog}: fetches and timestamp lookups over its segments,
 * within bounds the log has already checked ({@code logStartOffset <= from <= highWatermark}).
 * It never changes a segment. Owned by the log's thread.
 */
final class LogReader {
    private final NavigableMap<Long, LogSegment> segments;

    /** {@code segments} is the log's live segment map, read but never modified here. */
    LogReader(NavigableMap<Long, LogSegment> segments) {
        this.segments = segments;
    }

    /** The segments that may hold offsets in {@code [from, highWatermark)}, oldest first. */
    private Collection<LogSegment> segmentsBetween(long from, long highWatermark) {
        return segments.subMap(segments.floorKey(from), true, highWatermark, false).values();
    }

    /** See {@link PartitionLog#read}; {@code fetchOffset} is below the high watermark. */
    MemoryRecords read(long fetchOffset, long hw, int maxBytes, boolean minOneBatch) throws IOException {
        Span span = span(fetchOffset, hw, maxBytes, minOneBatch);
        if (span.bytes() == 0) {
            return MemoryRecords.EMPTY;
        }
        ByteBuffer buf = ByteBuffer.allocate(span.bytes());
        for (Range r : span.ranges()) {
            r.segment().readInto(buf, r.start(), r.end() - r.start());
        }
        return MemoryRecords.readableRecords(buf.flip());
    }

    /** See {@link PartitionLog#readInPlace}; {@code fetchOffset} is below the high watermark. */
    SegmentRecords readInPlace(long fetchOffset, long hw, int maxBytes, boolean minOneBatch) throws IOException {
        Span span = span(fetchOffset, hw, maxBytes, minOneBatch);
        if (span.bytes() == 0) {
            return SegmentRecords.EMPTY;
        }
        List<FileRecords> slices = new ArrayList<>(span.ranges().size());
        for (Range r : span.ranges()) {
            slices.add(r.segment().slice(r.start(), r.end() - r.start()));
        }
        return new SegmentRecords(slices);
    }

    /** Batches left on the files, and the offset after the last of them ({@code fetchOffset} if none). */
    record InPlace(SegmentRecords records, long endOffset) {}

    /** As {@link #readInPlace}, also saying where the returned batches end; {@code fetchOffset < limit}. */
    InPlace readInPlaceTo(long fetchOffset, long limit, int maxBytes, boolean minOneBatch) throws IOException {
        Span span = span(fetchOffset, limit, maxBytes, minOneBatch);
        if (span.bytes() == 0) {
            return new InPlace(SegmentRecords.EMPTY, fetchOffset);
        }
        List<FileRecords> slices = new ArrayList<>(span.ranges().size());
        for (Range r : span.ranges()) {
            slices.add(r.segment().slice(r.start(), r.end() - r.start()));
        }
        return new InPlace(new SegmentRecords(slices), span.endOffset());
    }

    /** See {@link PartitionLog#readBatchesInPlace}; {@code fetchOffset} is below the high watermark. */
    SegmentBatches readBatchesInPlace(long fetchOffset, long hw, int maxBytes, boolean minOneBatch) {
        SegmentBatches batches = SegmentBatches.collector(16);
        span(fetchOffset, hw, maxBytes, minOneBatch, batches);
        return batches;
    }

    private Span span(long fetchOffset, long hw, int maxBytes, boolean minOneBatch) {
        return span(fetchOffset, hw, maxBytes, minOneBatch, null);
    }

    /**
     * The byte ranges of the whole batches a read returns, one per segment, oldest first; each
     * batch also goes to {@code batches} unless it is null.
     */
    private Span span(long fetchOffset, long hw, int maxBytes, boolean minOneBatch, SegmentBatches batches) {
        List<Range> ranges = new ArrayList<>();
        int total = 0;
        long endOffset = fetchOffset;
        boolean done = false;
        for (LogSegment seg : segmentsBetween(fetchOffset, hw)) {
            if (done) {
                break;
            }
            int start = seg.positionOfBatchContaining(Math.max(fetchOffset, seg.baseOffset()));
            if (start < 0) {
                continue;
            }
            int end = start;
            for (FileChannelRecordBatch b : seg.batchesFrom(start)) {
                if (b.baseOffset() >= hw) {
                    done = true;
                    break;
                }
                int size = b.sizeInBytes();
                if ((long) total + size > maxBytes && !(minOneBatch && total == 0)) {
                    done = true;
                    break;
                }
                if (batches != null) {
                    batches.add(seg, b.baseOffset(), b.lastOffset(), b.position(), size, b.isControlBatch(),
                            b.isTransactional(), b.producerId());
                }
                end += size;
                total += size;
                endOffset = b.lastOffset() + 1;
            }
            if (end > start) {
                ranges.add(new Range(seg, start, end));
            }
        }
        return new Span(ranges, total, endOffset);
    }

    private record Range(LogSegment segment, int start, int end) {}

    private record Span(List<Range> ranges, int bytes, long endOffset) {}

    /** See {@link PartitionLog#offsetForTimestamp}. */
    OffsetAndTimestamp offsetForTimestamp(long timestampMs, long logStartOffset, long hw) throws IOException {
        for (LogSegment seg : segmentsBetween(logStartOffset, hw)) {
            if (seg.maxTimestampPosition() < 0 || seg.maxTimestamp() < timestampMs) {
                continue;
            }
            long from = Math.max(seg.firstCandidateOffset(timestampMs), logStartOffset);
            int pos = seg.positionOfBatchContaining(from);
            if (pos < 0) {
                continue;
            }
            for (FileChannelRecordBatch b : seg.batchesFrom(pos)) {
                if (b.baseOffset() >= hw) {
                    return null;
                }
                if (b.maxTimestamp() < timestampMs) {
                    continue;
                }
                for (Record r : b) {
                    if (r.offset() >= from && r.offset() < hw && r.timestamp() >= timestampMs) {
                        return new OffsetAndTimestamp(r.offset(), r.timestamp());
                    }
                }
            }
        }
        return null;
    }

    /** See {@link PartitionLog#maxTimestamp}; {@code logStartOffset} is below the high watermark. */
    OffsetAndTimestamp maxTimestamp(long logStartOffset, long hw) throws IOException {
        long bestTs = Long.MIN_VALUE;
        LogSegment bestSeg = null;
        int bestPos = -1;
        for (LogSegment seg : segmentsBetween(logStartOffset, hw)) {
            if (seg.baseOffset() >= logStartOffset && seg.nextOffset() <= hw) {
                if (seg.maxTimestampPosition() >= 0 && (bestSeg == null || seg.maxTimestamp() > bestTs)) {
                    bestTs = seg.maxTimestamp();
                    bestSeg = seg;
                    bestPos = seg.maxTimestampPosition();
                }
                continue;
            }
            int pos = seg.positionOfBatchContaining(Math.max(logStartOffset, seg.baseOffset()));
            if (pos < 0) {
                continue;
            }
            for (FileChannelRecordBatch b : seg.batchesFrom(pos)) {
                if (b.baseOffset() >= hw) {
                    break;
                }
                long ts = b.baseOffset() >= logStartOffset ? b.maxTimestamp() : maxTimestampFrom(b, logStartOffset);
                if (bestSeg == null || ts > bestTs) {
                    bestTs = ts;
                    bestSeg = seg;
                    bestPos = b.position();
                }
            }
        }
        if (bestSeg == null) {
            return null;
        }
        return firstRecordWithTimestamp(bestSeg, bestPos, bestTs, logStartOffset, hw);
    }

    /** The first record in {@code [logStartOffset, hw)} of the batch at {@code position} stamped {@code ts}. */
    private static OffsetAndTimestamp firstRecordWithTimestamp(LogSegment seg, int position, long ts,
            long logStartOffset, long hw) {
        for (FileChannelRecordBatch b : seg.batchesFrom(position)) {
            for (Record r : b) {
                if (r.offset() >= logStartOffset && r.offset() < hw && r.timestamp() == ts) {
                    return new OffsetAndTimestamp(r.offset(), r.timestamp());
                }
            }
            break;
        }
        throw new IllegalStateException("batch at " + position + " of " + seg.file() + " lost timestamp " + ts);
    }

    private static long maxTimestampFrom(FileChannelRecordBatch b, long fromOffset) {
        long max = Long.MIN_VALUE;
        for (Record r : b) {
            if (r.offset() >= fromOffset) {
                max = Math.max(max, r.timestamp());
            }
        }
        return max;
    }
}
