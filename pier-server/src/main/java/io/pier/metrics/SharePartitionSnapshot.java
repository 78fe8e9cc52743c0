package io.pier.metrics;

import java.util.Map;

/**
 * What the gauges show of one share-partition, taken on its owning shard and read from the
 * scrape thread. Immutable.
 *
 * @param lag KIP-1226 lag: high watermark - start offset - records settled for good in flight
 * @param oldestUnacknowledgedAgeMs how long the oldest AVAILABLE or ACQUIRED record has been in
 *     the in-flight window; 0 if there is none
 * @param acquiredByMember ACQUIRED records by the member id holding them
 * @param counts what its counters counted, as of the snapshot (for the web console)
 */
public record SharePartitionSnapshot(
        String group,
        String topic,
        int partition,
        long startOffset,
        long endOffset,
        long lag,
        int available,
        int acquired,
        int acknowledged,
        int archived,
        int archiving,
        int inBackoff,
        int blockedKeys,
        long oldestBlockedAgeMs,
        long oldestUnacknowledgedAgeMs,
        Map<String, Integer> acquiredByMember,
        ShareCounts counts) {
    public SharePartitionSnapshot {
        acquiredByMember = Map.copyOf(acquiredByMember);
    }
}
