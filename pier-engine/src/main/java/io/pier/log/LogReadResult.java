package io.pier.log;

import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * Outcome of {@link PartitionLog#read}.
 *
 * @param records whole batches copied to the heap; {@link MemoryRecords#EMPTY} when none, never null
 * @param highWatermark the high watermark at the time of the read
 * @param logStartOffset the log start offset at the time of the read
 * @param logEndOffset the log end offset at the time of the read
 */
public record LogReadResult(MemoryRecords records, long highWatermark, long logStartOffset, long logEndOffset) {}
