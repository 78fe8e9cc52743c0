package io.pier.metrics;

/**
 * What the gauges show of one partition log, taken on its owning shard. Immutable.
 *
 * @param highWatermark the durable end: consumers read below it
 */
public record LogSnapshot(
        String topic, int partition, long startOffset, long endOffset, long highWatermark, long sizeBytes) {}
