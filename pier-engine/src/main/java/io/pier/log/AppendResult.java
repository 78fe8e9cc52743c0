package io.pier.log;

/**
 * Outcome of {@link PartitionLog#append}.
 *
 * @param baseOffset first offset of the appended (or duplicate) batch
 * @param lastOffset last offset of the appended (or duplicate) batch
 * @param logAppendTimeMs the broker timestamp stamped on the batch, or -1 under CreateTime
 * @param logStartOffset the log start offset after the append
 * @param duplicate true when an idempotent producer re-sent one of its recent batches; nothing
 *     was appended and the offsets are those of the original append
 */
public record AppendResult(long baseOffset, long lastOffset, long logAppendTimeMs, long logStartOffset,
        boolean duplicate) {}
