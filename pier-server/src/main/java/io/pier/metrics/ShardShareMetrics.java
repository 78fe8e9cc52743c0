package io.pier.metrics;

import io.pier.share.ShareEvents;
import java.util.HashMap;
import java.util.Map;

/**
 * The share-partition metrics of one shard: one {@link ShareEvents} listener per share-partition
 * the shard owns, counting with plain fields, and the {@link #flush} that makes their counts
 * visible. Use it only on its shard, the single writer of every count here; the scrape thread only
 * sees what a flush handed to Prometheus.
 *
 * <p>A share-partition is known by its labels (group, topic, partition), which always belong to the
 * same shard (the topic-partition's). Its listener stays until {@link #forget}: a share-partition
 * dropped from memory and loaded again (AlterShareGroupOffsets) gets the same listener back, so
 * nothing told to the old or the new incarnation is lost.
 */
public final class ShardShareMetrics {
    private record Key(String group, String topic, int partition) {}

    private final PierMetrics metrics;
    private final Map<Key, SharePartitionMetrics> open = new HashMap<>();

    ShardShareMetrics(PierMetrics metrics) {
        this.metrics = metrics;
    }

    /** Shard thread only: the listener of a share-partition, counting from zero if it is new. */
    public ShareEvents events(String group, String topic, int partition) {
        return open.computeIfAbsent(new Key(group, topic, partition), k -> new SharePartitionMetrics(metrics,
                metrics.deliveryCountAtAck, group, topic, String.valueOf(partition),
                // The series' creation time, taken as Prometheus' own data points take it.
                System.currentTimeMillis()));
    }

    /**
     * Shard thread only: the share-partition's state was deleted. Its series disappear, and with
     * them whatever it counted since the last flush: dropped, never published. Events told to its
     * old listener afterwards (a late commit) are dropped too; the next {@link #events} for it
     * counts from zero in new series.
     */
    public void forget(String group, String topic, int partition) {
        SharePartitionMetrics m = open.remove(new Key(group, topic, partition));
        if (m != null) {
            m.discard();
        }
        metrics.removeShareSeries(group, topic, String.valueOf(partition));
    }

    /**
     * Shard thread only: what the share-partition's counters showed at the last {@link #flush}
     * (nothing if it has no listener).
     */
    public ShareCounts counts(String group, String topic, int partition) {
        SharePartitionMetrics m = open.get(new Key(group, topic, partition));
        return m == null ? ShareCounts.NONE : m.totals();
    }

    /**
     * Shard thread only: adds every count told since the last flush to what Prometheus exposes.
     * O(share-partitions × buckets), whatever the number of records.
     */
    public void flush() {
        for (SharePartitionMetrics m : open.values()) {
            m.flush();
        }
    }
}
