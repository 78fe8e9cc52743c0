package io.pier.log;

/**
 * What a partition knows of one producer, as DescribeProducers reports it: a copy taken on the
 * log's thread, safe to read anywhere.
 *
 * @param lastSequence the last sequence of the producer's newest batch in its current epoch, -1
 *     when it has none (only a marker since its last epoch bump)
 * @param lastTimestampMs the largest timestamp of its newest batch, or its newest marker's
 *     append time; -1 when unknown
 * @param coordinatorEpoch the coordinator epoch of its newest marker, -1 before any
 * @param currentTxnStartOffset the first offset of its ongoing transaction, -1 when none
 */
public record ActiveProducer(long producerId, short producerEpoch, int lastSequence, long lastTimestampMs,
        int coordinatorEpoch, long currentTxnStartOffset) {}
