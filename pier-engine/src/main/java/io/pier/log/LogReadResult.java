package io.pier.log;

import java.util.List;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * Outcome of {@link PartitionLog#read} (records copied to the heap, {@link MemoryRecords}) or of
 * {@link PartitionLog#readInPlace} (records left on the segment files, {@link SegmentRecords}).
 *
 * @param records whole batches; empty ({@link MemoryRecords#EMPTY}, {@link SegmentRecords#EMPTY})
 *     when none, never null
 * @param highWatermark the high watermark at the time of the read
 * @param logStartOffset the log start offset at the time of the read
 * @param logEndOffset the log end offset at the time of the read
 * @param lastStableOffset the last stable offset at the time of the read
 * @param abortedTransactions for a read_committed read, the aborted transactions overlapping the
 *     returned records, in marker order; otherwise empty
 */
public record LogReadResult<R extends BaseRecords>(R records, long highWatermark, long logStartOffset,
        long logEndOffset, long lastStableOffset, List<AbortedTransaction> abortedTransactions) {}
