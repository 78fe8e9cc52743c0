package io.pier.console;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The plots' data: for each group, its lag (and for a share group, the age of its oldest
 * unacknowledged record) sampled at a fixed interval into a {@link RingBuffer}.
 *
 * <p>Bounded memory: at most {@link #MAX_SERIES} series of {@link #POINTS_PER_SERIES} samples
 * each, two longs a sample, so about 1,000 x 360 x 16 bytes = 5.8 MB at worst, whatever the number
 * of groups. A new series past the limit drops the one read or written least recently; a series
 * whose group is gone is dropped at the next sample ({@link #retainOnly}).
 *
 * <p>Written by the console's sampler thread, read by the HTTP threads: every method holds this
 * object's monitor, for a copy of at most one series.
 */
final class History {
    /** How many series are kept at most. */
    static final int MAX_SERIES = 1_000;
    /** Samples per series: the last hour at the default interval of 10 s. */
    static final int POINTS_PER_SERIES = 360;

    /** What a series measures. */
    enum Metric {
        SHARE_LAG,
        SHARE_OLDEST_AGE_MS,
        CONSUMER_LAG
    }

    /** One series: a metric of one group. */
    record Key(Metric metric, String group) {}

    private final int pointsPerSeries;
    private final Map<Key, RingBuffer> series;

    History() {
        this(MAX_SERIES, POINTS_PER_SERIES);
    }

    History(int maxSeries, int pointsPerSeries) {
        this.pointsPerSeries = pointsPerSeries;
        // Access order: the eldest entry is the series used least recently.
        this.series = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, RingBuffer> eldest) {
                return size() > maxSeries;
            }
        };
    }

    synchronized void record(Key key, long timeMs, long value) {
        series.computeIfAbsent(key, k -> new RingBuffer(pointsPerSeries)).add(timeMs, value);
    }

    synchronized RingBuffer.Samples samples(Key key) {
        RingBuffer b = series.get(key);
        return b == null ? RingBuffer.Samples.NONE : b.samples();
    }

    /** Drops every series not in {@code live}. */
    synchronized void retainOnly(Set<Key> live) {
        series.keySet().retainAll(new HashSet<>(live));
    }

    synchronized int seriesCount() {
        return series.size();
    }
}
