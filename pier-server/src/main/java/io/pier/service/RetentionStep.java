package io.pier.service;

import java.io.IOException;

/** Applies retention and age-based segment rolls on each shard every {@code log.retention.check.interval.ms}. */
final class RetentionStep {

    private RetentionStep() {}

    /** The step that enforces retention on {@code shard}'s partitions every {@code intervalMs}. */
    static DutyStep step(Shard shard, PartitionRegistry partitions, long intervalMs) {
        return DutyStep.every(intervalMs, "retention", false, nowMs -> partitions.forEachOwned(shard, p -> {
            try {
                if (p.log().enforceRetention()) {
                    p.fireDataListeners();
                }
            } catch (IOException e) {
                shard.onStorageError("retention of " + p.topicPartition() + " failed", e);
            }
        }));
    }
}
