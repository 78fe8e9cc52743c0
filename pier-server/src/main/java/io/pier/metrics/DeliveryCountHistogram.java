package io.pier.metrics;

import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code pier_share_acknowledged_delivery_count}: a classic histogram built at scrape time from
 * totals the shards publish, instead of a Prometheus {@code Histogram} observed per record. Each
 * series (group, topic, partition, type) is published by the one shard that owns its
 * share-partition, as an immutable {@link Totals} replacing the previous one, so a flush costs
 * O(buckets) whatever the number of records, and the scrape thread reads only immutable values.
 * The exposition is the one the Prometheus histogram gave: same name, help, labels and buckets
 * ({@code le} 1 to 10 and +Inf), {@code _count} and {@code _sum}.
 */
final class DeliveryCountHistogram implements Collector {
    static final String NAME = "pier_share_acknowledged_delivery_count";
    static final String HELP = "Delivery count of records when a consumer accepted or rejected them, by type";
    static final String[] LABEL_NAMES = {"group", "topic", "partition", "type"};
    /** Upper bounds of the finite buckets: delivery counts 1 to 10 (Kafka's highest delivery limit). */
    static final int FINITE_BUCKETS = 10;
    /** Buckets including +Inf, where delivery counts above {@link #FINITE_BUCKETS} go. */
    static final int BUCKETS = FINITE_BUCKETS + 1;
    private static final double[] UPPER_BOUNDS = new double[BUCKETS];

    static {
        for (int i = 0; i < FINITE_BUCKETS; i++) {
            UPPER_BOUNDS[i] = i + 1;
        }
        UPPER_BOUNDS[FINITE_BUCKETS] = Double.POSITIVE_INFINITY;
    }

    /**
     * The cumulative figures of one series: {@code counts[i]} records fell in bucket {@code i}
     * (not cumulative over buckets; the writers add them up), {@code sum} is the sum of their
     * delivery counts. Never changed once published.
     */
    record Totals(long[] counts, long sum, long createdMillis) {
        Totals {
            if (counts.length != BUCKETS) {
                throw new IllegalArgumentException("expected " + BUCKETS + " buckets, got " + counts.length);
            }
        }

        static Totals empty(long createdMillis) {
            return new Totals(new long[BUCKETS], 0, createdMillis);
        }

        /** These totals plus {@code pending} (per bucket) and {@code pendingSum}. */
        Totals plus(long[] pending, long pendingSum) {
            long[] sums = Arrays.copyOf(counts, BUCKETS);
            for (int i = 0; i < BUCKETS; i++) {
                sums[i] += pending[i];
            }
            return new Totals(sums, sum + pendingSum, createdMillis);
        }
    }

    private final ConcurrentHashMap<Labels, Totals> series = new ConcurrentHashMap<>();

    /** The bucket a delivery count falls in: the first whose upper bound is not below it. */
    static int bucket(int deliveryCount) {
        if (deliveryCount <= 1) {
            return 0;
        }
        return Math.min(deliveryCount, BUCKETS) - 1;
    }

    static Labels labels(String group, String topic, String partition, String type) {
        return Labels.of(LABEL_NAMES, new String[] {group, topic, partition, type});
    }

    /** The owning shard replaces what the series shows. */
    void publish(Labels labels, Totals totals) {
        series.put(labels, totals);
    }

    /** The series is gone until published again. */
    void remove(Labels labels) {
        series.remove(labels);
    }

    @Override
    public HistogramSnapshot collect() {
        HistogramSnapshot.Builder snapshot = HistogramSnapshot.builder().name(NAME).help(HELP);
        series.forEach((labels, totals) -> snapshot.dataPoint(HistogramDataPointSnapshot.builder()
                .classicHistogramBuckets(ClassicHistogramBuckets.of(UPPER_BOUNDS, totals.counts()))
                .sum(totals.sum())
                .labels(labels)
                .createdTimestampMillis(totals.createdMillis())
                .build()));
        return snapshot.build();
    }

    @Override
    public String getPrometheusName() {
        return NAME;
    }

    @Override
    public MetricType getMetricType() {
        return MetricType.HISTOGRAM;
    }

    @Override
    public Set<String> getLabelNames() {
        return Set.of(LABEL_NAMES);
    }

    @Override
    public MetricMetadata getMetadata() {
        return new MetricMetadata(NAME, HELP);
    }
}
