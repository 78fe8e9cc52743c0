package io.pier.service;

import java.io.IOException;
import java.util.Map;

/**
 * Deletes what no share-partition needs from the logs of a gateway, which are caches of their
 * upstream partitions (mirrors): on each shard, every {@code intervalMs}, each partition's log
 * loses the segments wholly below the lowest start offset of its share-partitions here, and all
 * of them when it has none. Records below a share-partition's start are settled (accepted,
 * released for good or archived) and never read again; a share-partition that needs older
 * records later (a new group reading from the earliest, offsets altered back) restarts the mirror
 * where it starts ({@link ShareLogSource#cover}). Without this a gateway's disk grew with
 * everything its share groups had read until it restarted. A broker's own logs are never trimmed
 * so: their retention settings alone decide.
 */
final class MirrorTrimStep {

    private MirrorTrimStep() {}

    static DutyStep step(Shard shard, PartitionRegistry partitions, SharePartitions live, long intervalMs) {
        return DutyStep.every(intervalMs, "mirror-trim", false, nowMs -> {
            if (!live.source().cachesRecords()) {
                return;
            }
            Map<Partition, Long> lowest = live.lowestStarts(shard);
            partitions.forEachOwned(shard, p -> {
                long start = lowest.getOrDefault(p, Long.MAX_VALUE);
                if (start < 0) {
                    return; // a share-partition is loading: its start is not known yet
                }
                try {
                    long upTo = Math.min(start, p.log().highWatermark());
                    if (upTo > p.log().logStartOffset()) {
                        p.log().deleteRecordsBefore(upTo);
                    }
                } catch (IOException e) {
                    shard.onStorageError("trimming the mirror of " + p.topicPartition() + " failed", e);
                }
            });
        });
    }
}
