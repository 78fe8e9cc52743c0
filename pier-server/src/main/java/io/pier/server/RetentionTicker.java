package io.pier.server;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Applies retention and age-based segment rolls on each shard every {@code log.retention.check.interval.ms}. */
final class RetentionTicker {
    private static final Logger LOG = LoggerFactory.getLogger(RetentionTicker.class);

    private RetentionTicker() {}

    static void install(Shard[] shards, PartitionRegistry partitions, long intervalMs) {
        for (Shard shard : shards) {
            long[] nextMs = {Long.MIN_VALUE};
            shard.execute(() -> shard.addTicker(nowMs -> {
                if (nextMs[0] == Long.MIN_VALUE) {
                    nextMs[0] = nowMs + intervalMs;
                    return;
                }
                if (nowMs < nextMs[0]) {
                    return;
                }
                nextMs[0] = nowMs + intervalMs;
                partitions.forEachOwned(shard, p -> {
                    try {
                        if (p.log().enforceRetention()) {
                            p.fireDataListeners();
                        }
                    } catch (IOException e) {
                        LOG.error("Retention of {} failed", p.topicPartition(), e);
                    }
                });
            }));
        }
    }
}
