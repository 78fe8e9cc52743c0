package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.PierMetrics;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the console's samples at a fixed interval on a thread of its own: each group's lag (and a
 * share group's oldest unacknowledged age) into the {@link History}, and the request rate per API
 * since the previous sample. It reads only what the shards already publish for the metrics
 * (immutable snapshots) and the request counter, never engine state, so it costs the shards
 * nothing; one sample is O(share-partitions + committed offsets).
 */
final class Sampler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Sampler.class);

    /** Requests per second by API over the last interval, and requests since the start. */
    record RequestRate(double perSecond, long total) {}

    private final PierMetrics metrics;
    private final History history;
    private final long intervalMs;
    private final LongSupplier wallMs;
    private ScheduledExecutorService thread;
    private ScheduledFuture<?> task;
    // Sampler thread only.
    private Map<String, Long> lastCounts = Map.of();
    private long lastCountsMs = -1;
    private volatile Map<String, RequestRate> requestRates = Map.of();

    Sampler(PierMetrics metrics, History history, long intervalMs, LongSupplier wallMs) {
        this.metrics = metrics;
        this.history = history;
        this.intervalMs = intervalMs;
        this.wallMs = wallMs;
    }

    void start() {
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pier-console-sampler");
            t.setDaemon(true);
            return t;
        });
        task = thread.scheduleAtFixedRate(this::sampleSafely, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Request rates by API name, as of the last sample; any thread. */
    Map<String, RequestRate> requestRates() {
        return requestRates;
    }

    private void sampleSafely() {
        try {
            sample();
        } catch (RuntimeException e) {
            // A scheduled task that throws is never run again: log, and sample next time.
            LOG.warn("The console's sample failed", e);
        }
    }

    /** Takes one sample; the sampler thread (or a test) only. */
    void sample() {
        long nowMs = wallMs.getAsLong();
        Set<History.Key> live = new HashSet<>();
        Figures.byShareGroup(metrics.sharePartitions()).forEach((group, f) -> {
            record(live, new History.Key(History.Metric.SHARE_LAG, group), nowMs, f.lag());
            record(live, new History.Key(History.Metric.SHARE_OLDEST_AGE_MS, group), nowMs,
                    f.oldestUnacknowledgedAgeMs());
        });
        Map<String, Long> consumerLag = Figures.consumerLag(Figures.committed(metrics.groups(), metrics.logs()));
        for (GroupSnapshot.Listed g : Figures.listed(metrics.groups())) {
            if (!g.type().equals(GroupSnapshot.SHARE)) {
                consumerLag.putIfAbsent(g.group(), 0L);
            }
        }
        consumerLag.forEach((group, lag) -> record(live, new History.Key(History.Metric.CONSUMER_LAG, group), nowMs,
                lag));
        history.retainOnly(live);
        sampleRequestRates(nowMs);
    }

    private void record(Set<History.Key> live, History.Key key, long nowMs, long value) {
        live.add(key);
        history.record(key, nowMs, value);
    }

    private void sampleRequestRates(long nowMs) {
        Map<String, Long> counts = metrics.requestCounts();
        Map<String, RequestRate> rates = new TreeMap<>();
        double seconds = lastCountsMs < 0 ? 0 : (nowMs - lastCountsMs) / 1000.0;
        counts.forEach((api, total) -> {
            long before = lastCountsMs < 0 ? total : lastCounts.getOrDefault(api, 0L);
            rates.put(api, new RequestRate(seconds > 0 ? (total - before) / seconds : 0, total));
        });
        lastCounts = new HashMap<>(counts);
        lastCountsMs = nowMs;
        requestRates = Collections.unmodifiableMap(rates); // by API name, as the overview lists them
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
            thread.shutdownNow();
        }
    }
}
