package io.pier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricsScrapeTest {
    private static final String TEXT = String.join("\n",
            "# HELP pier_share_lag Records not yet settled",
            "# TYPE pier_share_lag gauge",
            "pier_share_lag{group=\"g \\\"1\\\"\",partition=\"0\",topic=\"t\"} 4.0",
            "pier_share_lag{group=\"g2\",partition=\"0\",topic=\"t\"} 7.0",
            "pier_up 1",
            "pier_hist_bucket{le=\"+Inf\"} 3 1700000000000",
            "");

    @Test
    void shouldReadLabelledSamplesWhateverTheLabelOrderAndEscapes() {
        MetricsScrape scrape = MetricsScrape.parse(TEXT);

        assertThat(scrape.value("pier_share_lag", Map.of("topic", "t", "group", "g \"1\""))).isEqualTo(4.0);
        assertThat(scrape.value("pier_share_lag", Map.of("group", "g2"))).isEqualTo(7.0);
        assertThat(scrape.value("pier_up", Map.of())).isEqualTo(1.0);
        assertThat(scrape.value("pier_hist_bucket", Map.of("le", "+Inf"))).isEqualTo(3.0);
    }

    @Test
    void shouldGiveNaNForAnAbsentSample() {
        MetricsScrape scrape = MetricsScrape.parse(TEXT);

        assertThat(scrape.value("pier_share_lag", Map.of("group", "other"))).isNaN();
        assertThat(scrape.value("pier_nothing", Map.of())).isNaN();
    }
}
