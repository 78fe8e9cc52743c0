package io.pier.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.share.ShareEvents;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.config.EscapingScheme;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/** The exposition the registry produces, without HTTP. */
class PierMetricsTest {
    private final PierMetrics metrics = new PierMetrics(2);

    private String exposition() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldCountShareEventsUnderTheirPartitionsLabels() throws IOException {
        ShareEvents events = metrics.shares(1).events("g", "t", 3);

        events.onReleased(1);
        events.onReleased(2);
        events.onArchived(ShareEvents.ArchiveCause.LOG_START, 5);
        metrics.shares(1).flush();

        String text = exposition();
        assertThat(text).contains("pier_share_releases_total{group=\"g\",partition=\"3\",topic=\"t\"} 2");
        assertThat(text).contains(
                "pier_share_archived_records_total{cause=\"log_start\",group=\"g\",partition=\"3\",topic=\"t\"} 5");
    }

    @Test
    void shouldShowWhatEachShardPublishedLast() throws IOException {
        metrics.publish(0, List.of(new SharePartitionSnapshot("g", "t", 0, 10, 13, 4, 0, 4, 0, 0, 0, 0, 0, 0, 2500,
                Map.of("m1", 3), ShareCounts.NONE)), List.of(new LogSnapshot("t", 0, 0, 14, 14, 999)));
        metrics.publish(1, List.of(new SharePartitionSnapshot("g", "t", 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
                Map.of("m1", 1), ShareCounts.NONE)), List.of());

        String text = exposition();
        assertThat(text).contains("pier_share_lag{group=\"g\",partition=\"0\",topic=\"t\"} 4.0");
        assertThat(text).contains("pier_share_oldest_unacknowledged_age_seconds{group=\"g\",partition=\"0\",topic=\"t\"} 2.5");
        assertThat(text).contains("pier_share_member_acquired_records{group=\"g\",member=\"m1\"} 4.0");
        assertThat(text).contains("pier_log_size_bytes{partition=\"0\",topic=\"t\"} 999.0");

        metrics.publish(0, List.of(), List.of());
        assertThat(exposition()).doesNotContain("pier_share_lag{group=\"g\",partition=\"0\"");
    }

    @Test
    void shouldTimeRequestsByApiName() throws IOException {
        metrics.onResponse(ApiKeys.SHARE_FETCH, 2_000_000);

        assertThat(exposition()).contains("pier_request_duration_seconds_count{api=\"ShareFetch\"} 1");
    }

    @Test
    void shouldCountLongPollAnswersByApiAndOutcome() throws IOException {
        metrics.onLongPollAnswer(ApiKeys.SHARE_FETCH, "cut_short");
        metrics.onLongPollAnswer(ApiKeys.SHARE_FETCH, "cut_short");
        metrics.onLongPollAnswer(ApiKeys.FETCH, "max_wait");

        String text = exposition();
        assertThat(text).contains("pier_long_poll_answers_total{api=\"ShareFetch\",outcome=\"cut_short\"} 2");
        assertThat(text).contains("pier_long_poll_answers_total{api=\"Fetch\",outcome=\"max_wait\"} 1");
    }

    @Test
    void shouldForgetADeletedSharePartitionsCounters() throws IOException {
        metrics.shares(1).events("g", "t", 3).onRejected(1);
        metrics.shares(1).flush();
        assertThat(exposition()).contains("pier_share_rejects_total{group=\"g\"");

        metrics.shares(1).forget("g", "t", 3);

        assertThat(exposition()).doesNotContain("pier_share_rejects_total{group=\"g\"");
    }

    @Test
    void shouldAddUpGroupsOverShardsAndJoinCommittedOffsetsWithTheHighWatermarkOfAnyShard() throws IOException {
        GroupSnapshot.Kind stable = new GroupSnapshot.Kind(GroupSnapshot.CONSUMER, "Stable");
        metrics.publish(1, List.of(), List.of(new LogSnapshot("t", 0, 0, 12, 10, 100)));
        metrics.publishGroups(0, new GroupSnapshot(Map.of(stable, 2), 3, 5,
                List.of(new GroupSnapshot.Committed("g", "t", 0, 4), new GroupSnapshot.Committed("g", "gone", 0, 9)), List.of()));
        metrics.publishGroups(1, new GroupSnapshot(Map.of(stable, 1), 1, 0, List.of(), List.of()));

        String text = exposition();
        assertThat(text).contains("pier_groups{state=\"Stable\",type=\"consumer\"} 3.0\n",
                "pier_groups{state=\"PreparingRebalance\",type=\"classic\"} 0.0\n",
                "pier_group_rebalances_total{type=\"classic\"} 4.0\n",
                "pier_group_rebalances_total{type=\"consumer\"} 5.0\n",
                "pier_consumer_group_committed_offset{group=\"g\",partition=\"0\",topic=\"t\"} 4.0\n",
                "pier_consumer_group_lag{group=\"g\",partition=\"0\",topic=\"t\"} 6.0\n",
                "pier_consumer_group_committed_offset{group=\"g\",partition=\"0\",topic=\"gone\"} 9.0\n");
        // The lag is high watermark - committed (10 - 4), not end offset; without a log, none.
        assertThat(text).doesNotContain("pier_consumer_group_lag{group=\"g\",partition=\"0\",topic=\"gone\"}");
    }
}
