package io.pier.log;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.record.internal.FileRecords;

/**
 * The bounds of whole record batches left on a log's segment files, for a reader that picks some
 * of them to send on without looking inside (a share fetch acquires by offset, then sends the
 * batches that hold what it acquired): each batch's first and last offset, whether it is a control
 * or a transactional batch and of which producer (from the header the read loads anyway), and
 * where it lies.
 * Made by {@link PartitionLog#readBatchesInPlace} on the log's thread and used there; what crosses
 * to a network thread is the {@link SegmentRecords} of {@link #records}.
 *
 * <p>Reading only the batch headers, rather than copying the batches to the heap to parse them,
 * keeps a share fetch from allocating and copying every byte it reads, most of which it then
 * does not send (it reads ahead of what it may acquire).
 */
public final class SegmentBatches {
    private static final byte CONTROL = 1;
    private static final byte TRANSACTIONAL = 2;

    /** No batches. */
    public static final SegmentBatches EMPTY = new SegmentBatches();

    private LogSegment[] segments = new LogSegment[0];
    private long[] baseOffsets = new long[0];
    private long[] lastOffsets = new long[0];
    private int[] positions = new int[0];
    private int[] sizes = new int[0];
    private long[] producerIds = new long[0];
    private byte[] flags = new byte[0];
    private int count;
    private int sizeInBytes;

    private SegmentBatches() {}

    /** An empty collector, filled by the log's reader with {@link #add}. */
    static SegmentBatches collector(int expected) {
        SegmentBatches b = new SegmentBatches();
        b.grow(Math.max(4, expected));
        return b;
    }

    void add(LogSegment segment, long baseOffset, long lastOffset, int position, int size, boolean controlBatch,
            boolean transactional, long producerId) {
        if (count == baseOffsets.length) {
            grow(count * 2);
        }
        segments[count] = segment;
        baseOffsets[count] = baseOffset;
        lastOffsets[count] = lastOffset;
        positions[count] = position;
        sizes[count] = size;
        flags[count] = (byte) ((controlBatch ? CONTROL : 0) | (transactional ? TRANSACTIONAL : 0));
        producerIds[count] = producerId;
        count++;
        sizeInBytes += size;
    }

    private void grow(int capacity) {
        segments = Arrays.copyOf(segments, capacity);
        baseOffsets = Arrays.copyOf(baseOffsets, capacity);
        lastOffsets = Arrays.copyOf(lastOffsets, capacity);
        positions = Arrays.copyOf(positions, capacity);
        sizes = Arrays.copyOf(sizes, capacity);
        producerIds = Arrays.copyOf(producerIds, capacity);
        flags = Arrays.copyOf(flags, capacity);
    }

    /** Number of batches. */
    public int count() {
        return count;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** Bytes of all the batches. */
    public int sizeInBytes() {
        return sizeInBytes;
    }

    /** First offset of batch {@code i} (in offset order). */
    public long baseOffset(int i) {
        checkIndex(i);
        return baseOffsets[i];
    }

    /** Last offset of batch {@code i}. */
    public long lastOffset(int i) {
        checkIndex(i);
        return lastOffsets[i];
    }

    /** True when batch {@code i} is a control batch (a transaction marker), read from its header. */
    public boolean isControl(int i) {
        checkIndex(i);
        return (flags[i] & CONTROL) != 0;
    }

    /** True when batch {@code i} was written in a transaction (its header's transactional flag). */
    public boolean isTransactional(int i) {
        checkIndex(i);
        return (flags[i] & TRANSACTIONAL) != 0;
    }

    /** The producer id in batch {@code i}'s header, -1 for none. */
    public long producerId(int i) {
        checkIndex(i);
        return producerIds[i];
    }

    /**
     * The whole batches that hold any offset of {@code firstOffset..lastOffset}, where they lie on
     * the segment files (one slice per segment); empty if no batch does.
     */
    public SegmentRecords records(long firstOffset, long lastOffset) throws IOException {
        int from = 0;
        while (from < count && lastOffsets[from] < firstOffset) {
            from++;
        }
        int to = from;
        while (to < count && baseOffsets[to] <= lastOffset) {
            to++;
        }
        if (from == to) {
            return SegmentRecords.EMPTY;
        }
        List<FileRecords> slices = new ArrayList<>(1);
        int i = from;
        while (i < to) {
            LogSegment segment = segments[i];
            int start = positions[i];
            int end = start;
            // Batches of one segment that a read returns are contiguous in its file.
            while (i < to && segments[i] == segment) {
                end = positions[i] + sizes[i];
                i++;
            }
            slices.add(segment.slice(start, end - start));
        }
        return new SegmentRecords(slices);
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("batch " + i + " of " + count);
        }
    }

    @Override
    public String toString() {
        return "SegmentBatches(" + count + " batches, " + sizeInBytes + " bytes)";
    }
}
