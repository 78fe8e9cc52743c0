package io.pier.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.share.ShareEvents;
import io.pier.share.ShareEvents.ArchiveCause;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Share-partition counts are plain fields until the owning shard flushes them: nothing told shows
 * before {@link ShardShareMetrics#flush}, everything after it, and the delivery-count histogram
 * reads exactly as the Prometheus histogram it replaces.
 */
class ShardShareMetricsTest {
    private static final String SP = "group=\"g\",partition=\"3\",topic=\"t\"";

    private final PierMetrics metrics = new PierMetrics(2);
    private final ShardShareMetrics shard = metrics.shares(1);

    private static String exposition(PrometheusRegistry registry, ExpositionFormatWriter writer)
            throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writer.write(out, registry.scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        return out.toString(StandardCharsets.UTF_8);
    }

    private String exposition() throws IOException {
        return exposition(metrics.registry(), PrometheusTextFormatWriter.create());
    }

    /** The lines of the exposition that are about share-partitions (their counters and histogram). */
    private static List<String> shareLines(String exposition) {
        return exposition.lines()
                .filter(l -> l.contains("pier_share_") && !l.contains("pier_share_member"))
                .collect(Collectors.toList());
    }

    private static void tellEverything(ShareEvents events) {
        for (int i = 0; i < 7; i++) {
            events.onAcquired(1);
        }
        events.onAccepted(1);
        events.onAccepted(1);
        events.onAccepted(2);
        events.onAccepted(10);
        events.onAccepted(12); // above the last finite bucket: counted in +Inf, and in the sum
        events.onRejected(3);
        events.onReleased(1);
        events.onReleased(2);
        events.onLockExpired(1);
        events.onMemberReleased(2);
        events.onMemberReleased(2);
        events.onArchived(ArchiveCause.REJECTED, 1);
        events.onArchived(ArchiveCause.DELIVERY_LIMIT, 2);
        events.onArchived(ArchiveCause.LOG_START, 40);
    }

    @Test
    void shouldShowNothingToldUntilTheFlushAndEverythingAfterIt() throws IOException {
        ShareEvents events = shard.events("g", "t", 3);
        String before = exposition();
        assertThat(before).contains("pier_share_deliveries_total{" + SP + "} 0.0",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"accept\"} 0");

        tellEverything(events);

        assertThat(exposition()).isEqualTo(before);

        shard.flush();

        String text = exposition();
        assertThat(text).contains(
                "pier_share_deliveries_total{" + SP + "} 7.0\n",
                "pier_share_accepts_total{" + SP + "} 5.0\n",
                "pier_share_rejects_total{" + SP + "} 1.0\n",
                "pier_share_releases_total{" + SP + "} 2.0\n",
                "pier_share_lock_expiries_total{" + SP + "} 1.0\n",
                "pier_share_session_releases_total{" + SP + "} 2.0\n",
                "pier_share_archived_records_total{cause=\"rejected\"," + SP + "} 1.0\n",
                "pier_share_archived_records_total{cause=\"delivery_limit\"," + SP + "} 2.0\n",
                "pier_share_archived_records_total{cause=\"log_start\"," + SP + "} 40.0\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"1.0\"} 2\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"2.0\"} 3\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"9.0\"} 3\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"10.0\"} 4\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"+Inf\"} 5\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"accept\"} 5\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"accept\"} 26.0\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"reject\",le=\"2.0\"} 0\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"reject\",le=\"3.0\"} 1\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"reject\"} 1\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"reject\"} 3.0\n");

        // A second flush with nothing told changes nothing; what is told next adds to the totals.
        shard.flush();
        assertThat(exposition()).isEqualTo(text);
        events.onAccepted(2);
        events.onAcquired(2);
        assertThat(exposition()).isEqualTo(text);
        shard.flush();
        assertThat(exposition()).contains(
                "pier_share_deliveries_total{" + SP + "} 8.0\n",
                "pier_share_accepts_total{" + SP + "} 6.0\n",
                "pier_share_acknowledged_delivery_count_bucket{" + SP + ",type=\"accept\",le=\"2.0\"} 4\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"accept\"} 6\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"accept\"} 28.0\n");
    }

    @Test
    void shouldExposeTheDeliveryCountsExactlyAsThePrometheusHistogramDid() throws IOException {
        PrometheusRegistry reference = new PrometheusRegistry();
        // The histogram PierMetrics registered before counts were flushed from the shards.
        Histogram old = Histogram.builder().name("pier_share_acknowledged_delivery_count")
                .help("Delivery count of records when a consumer accepted or rejected them, by type")
                .labelNames("group", "topic", "partition", "type")
                .classicOnly()
                .classicUpperBounds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
                .withoutExemplars()
                .register(reference);
        ShareEvents events = shard.events("g", "t", 3);
        shard.events("g", "t", 4);
        for (String p : List.of("3", "4")) {
            old.labelValues("g", "t", p, "accept");
            old.labelValues("g", "t", p, "reject");
        }
        for (int count : new int[] {1, 1, 2, 10, 12, 0, -1, 5, 11}) {
            events.onAccepted(count);
            old.labelValues("g", "t", "3", "accept").observe(count);
        }
        events.onRejected(4);
        old.labelValues("g", "t", "3", "reject").observe(4);
        shard.flush();

        for (ExpositionFormatWriter writer : List.of(PrometheusTextFormatWriter.create(),
                OpenMetricsTextFormatWriter.create())) {
            List<String> expected = histogramLines(exposition(reference, writer));
            assertThat(expected).hasSize(2 + 4 * (11 + 2));
            assertThat(histogramLines(exposition(metrics.registry(), writer))).isEqualTo(expected);
        }
    }

    private static List<String> histogramLines(String exposition) {
        return exposition.lines().filter(l -> l.contains("pier_share_acknowledged_delivery_count"))
                .collect(Collectors.toList());
    }

    @Test
    void shouldGiveASharePartitionLoadedAgainTheListenerItHadWithItsPendingCounts() throws IOException {
        ShareEvents first = shard.events("g", "t", 3);
        first.onAccepted(1);

        // AlterShareGroupOffsets dropped it from memory; the next fetch loads it again.
        ShareEvents again = shard.events("g", "t", 3);
        again.onAccepted(2);
        first.onAccepted(3); // a late commit of the old incarnation
        shard.flush();

        assertThat(again).isSameAs(first);
        assertThat(exposition()).contains("pier_share_accepts_total{" + SP + "} 3.0\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"accept\"} 6.0\n");
    }

    @Test
    void shouldDropTheCountsOfAForgottenSharePartitionWithItsSeriesAndNeverShowThemAgain()
            throws IOException {
        String empty = exposition();
        ShareEvents events = shard.events("g", "t", 3);
        events.onAccepted(1);
        events.onArchived(ArchiveCause.LOG_START, 5);
        shard.flush();
        events.onAccepted(2);
        events.onAcquired(1); // pending when its state is deleted

        shard.forget("g", "t", 3);

        assertThat(shareLines(exposition())).isEqualTo(shareLines(empty));
        events.onRejected(1); // told late, after the state was deleted
        shard.flush();
        assertThat(shareLines(exposition())).as("pending counts dropped, no series resurrected")
                .isEqualTo(shareLines(empty));

        // Fetched again later: new series, from zero.
        ShareEvents fresh = shard.events("g", "t", 3);
        assertThat(fresh).isNotSameAs(events);
        fresh.onAccepted(4);
        shard.flush();
        String text = exposition();
        assertThat(text).contains("pier_share_accepts_total{" + SP + "} 1.0\n",
                "pier_share_deliveries_total{" + SP + "} 0.0\n",
                "pier_share_rejects_total{" + SP + "} 0.0\n",
                "pier_share_archived_records_total{cause=\"log_start\"," + SP + "} 0.0\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"accept\"} 1\n",
                "pier_share_acknowledged_delivery_count_sum{" + SP + ",type=\"accept\"} 4.0\n",
                "pier_share_acknowledged_delivery_count_count{" + SP + ",type=\"reject\"} 0\n");
    }

    @Test
    void shouldFlushOnlyTheShardItBelongsTo() throws IOException {
        metrics.shares(0).events("g", "t", 0).onAcquired(1);
        shard.events("g", "t", 3).onAcquired(1);

        shard.flush();

        String text = exposition();
        assertThat(text).contains("pier_share_deliveries_total{" + SP + "} 1.0\n",
                "pier_share_deliveries_total{group=\"g\",partition=\"0\",topic=\"t\"} 0.0\n");
    }
}
