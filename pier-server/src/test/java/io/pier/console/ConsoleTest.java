package io.pier.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.LogSnapshot;
import io.pier.metrics.PierMetrics;
import io.pier.metrics.ShareCounts;
import io.pier.metrics.SharePartitionSnapshot;
import io.pier.security.acl.Authorizer;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

/** The console without a browser or a broker: escaping, pages, plots, the ring buffers and the sampler. */
class ConsoleTest {
    private static final String EVIL = "<img src=x onerror=alert(1)>&\"'";
    private static final String EVIL_ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;";

    private static SharePartitionSnapshot share(String group, String topic, int partition, long start, long lag,
            long oldestMs, ShareCounts counts) {
        return new SharePartitionSnapshot(group, topic, partition, start, start + 5, lag, 1, 2, 3, 4, 0, 0, 0, 0,
                oldestMs, Map.of("m-1", 2), counts);
    }

    private static ShareCounts counts(long deadLetters, long acceptedAtFirstDelivery) {
        List<Long> accepted = new java.util.ArrayList<>(Collections.nCopies(ShareCounts.DELIVERY_COUNT_BUCKETS, 0L));
        accepted.set(0, acceptedAtFirstDelivery);
        return new ShareCounts(0, acceptedAtFirstDelivery, 0, 0, 0, 0, 2, 1, 0, deadLetters, 0, accepted,
                Collections.nCopies(ShareCounts.DELIVERY_COUNT_BUCKETS, 0L));
    }

    @Test
    void shouldEscapeEveryCharacterThatMeansSomethingInHtml() {
        assertThat(Html.escape(EVIL)).isEqualTo(EVIL_ESCAPED);
        assertThat(Html.escape("plain-name_1.x")).isEqualTo("plain-name_1.x");
        assertThat(Html.escape(null)).isEmpty();
        assertThat(Html.href("/share-group", "a&b<c> d")).isEqualTo("/share-group?id=a%26b%3Cc%3E+d");
    }

    @Test
    void shouldRenderAShareGroupWhoseNamesAreMarkupAsText() {
        SharePartitionSnapshot s = share(EVIL, EVIL + "-topic", 0, 10, 7, 1500, counts(3, 4));
        ShareGroupPage.Model model = new ShareGroupPage.Model(EVIL, "Stable",
                new ConsoleSources.ShareGroupSettings(true, EVIL, 5),
                Optional.of(List.of(new ConsoleSources.Member("m-1", EVIL, "/127.0.0.1", 3,
                        List.of(new TopicPartition(EVIL + "-topic", 0))))),
                List.of(s), true, Optional.empty(), Map.of(new TopicPartition(EVIL + "-topic", 1),
                        new ConsoleSources.NodeRef(2, EVIL)), RingBuffer.Samples.NONE, RingBuffer.Samples.NONE);
        String page = Layout.page("Share group " + EVIL, Layout.Section.SHARE_GROUPS, "User:ANONYMOUS", 1000,
                ShareGroupPage.render(model, Viewer.EVERYTHING));

        assertThat(page).doesNotContain("<img").contains("<title>Share group " + EVIL_ESCAPED + " - Pier</title>")
                .contains("<h1>Share group " + EVIL_ESCAPED + "</h1>");
        assertThat(page).contains("data-key=\"" + EVIL_ESCAPED + "-topic-0\"")
                .contains("data-field=\"start-offset\" data-value=\"10\"")
                .contains("data-field=\"lag\" data-value=\"7\"")
                .contains("data-field=\"blocked-keys\"") // an ordered group shows its blocked keys
                .contains("data-field=\"oldest-age\" data-value=\"1500\">1.5 s<");
        assertThat(page).contains("<tr data-key=\"dead_letters\"><td data-field=\"cause\">dead letters written</td>"
                + "<td class=\"num\" data-field=\"records\" data-value=\"3\">");
        assertThat(page).contains("<tr data-key=\"accept\"><td data-field=\"type\">accept</td>"
                + "<td class=\"num\" data-field=\"d1\" data-value=\"4\">");
        // a gateway node names the node serving a share-partition it does not, as text
        assertThat(page).contains("<tr data-key=\"" + EVIL_ESCAPED + "-topic-1\"><td data-field=\"share-partition\">"
                + EVIL_ESCAPED + "-topic-1</td><td data-field=\"node\">node 2 (" + EVIL_ESCAPED + ")</td>");
        assertThat(page).contains("<td data-field=\"assigned\">" + EVIL_ESCAPED + "-topic-0</td>")
                .contains("data-field=\"acquired\" data-value=\"2\"");
    }

    @Test
    void shouldLinkEachShareGroupWithItsNameEncodedAndAddUpItsSharePartitions() {
        Published p = new Published(List.of(share("a&b", "t", 0, 10, 7, 100, counts(1, 0)),
                share("a&b", "t", 1, 0, 5, 900, counts(2, 0))), List.of(),
                List.of(new GroupSnapshot(Map.of(), 0, 0, List.of(),
                        List.of(new GroupSnapshot.Listed("a&b", GroupSnapshot.SHARE, "Stable")))));
        String html = ShareGroupsPage.render(p, Viewer.EVERYTHING, false, g -> Optional.empty()).toString();

        assertThat(html).contains("<a href=\"/share-group?id=a%26b\">a&amp;b</a>")
                .contains("data-field=\"share-partitions\" data-value=\"2\"")
                .contains("data-field=\"lag\" data-value=\"12\"")
                .contains("data-field=\"oldest-age\" data-value=\"900\"")
                .contains("data-field=\"dead-letters\" data-value=\"3\"")
                .contains("data-field=\"archived\" data-value=\"6\"");
    }

    @Test
    void shouldShowOnlyTheTopicsAndGroupsTheAuthorizerLetsThePrincipalDescribe() {
        KafkaPrincipal viewer = new KafkaPrincipal("User", "viewer");
        Authorizer acls = (principal, host, op, type, name) -> principal.equals(viewer)
                && (type == ResourceType.TOPIC && name.equals("seen") || type == ResourceType.GROUP && name.equals("g1"));
        Published p = new Published(List.of(),
                List.of(new LogSnapshot("seen", 0, 0, 10, 10, 2048), new LogSnapshot("unseen", 0, 0, 5, 5, 100)),
                List.of(new GroupSnapshot(Map.of(), 0, 0, List.of(), List.of(
                        new GroupSnapshot.Listed("g1", GroupSnapshot.SHARE, "Empty"),
                        new GroupSnapshot.Listed("g2", GroupSnapshot.SHARE, "Empty")))));
        ConsoleSources.BrokerFacts broker = new ConsoleSources.BrokerFacts(1, "cid", false, 2,
                Map.of("PLAINTEXT", "127.0.0.1:9092"));

        String overview = OverviewPage.render(p, Viewer.of(acls, viewer, "127.0.0.1"), broker,
                Map.of("PRODUCE", new Sampler.RequestRate(3.5, 7)), 1000).toString();
        assertThat(overview).contains("data-key=\"seen\"").doesNotContain("unseen").doesNotContain("PRODUCE")
                .doesNotContain("127.0.0.1:9092").contains("Request rates need DESCRIBE on the cluster");
        assertThat(ShareGroupsPage.render(p, Viewer.of(acls, viewer, "127.0.0.1"), false, g -> Optional.empty()).toString())
                .contains("data-key=\"g1\"").doesNotContain("g2");
        String everything = OverviewPage.render(p, Viewer.of(null, viewer, "127.0.0.1"), broker,
                Map.of("PRODUCE", new Sampler.RequestRate(3.5, 7)), 1000).toString();
        assertThat(everything).contains("unseen").contains("data-field=\"rate\" data-value=\"3.5\"");
    }

    @Test
    void shouldKeepTheLastSamplesOfARingBufferOldestFirst() {
        RingBuffer ring = new RingBuffer(3);
        assertThat(ring.samples().size()).isZero();
        for (int i = 1; i <= 5; i++) {
            ring.add(i * 1000L, i * 10L);
        }
        RingBuffer.Samples s = ring.samples();
        assertThat(s.size()).isEqualTo(3);
        assertThat(List.of(s.value(0), s.value(1), s.value(2))).containsExactly(30L, 40L, 50L);
        assertThat(List.of(s.timeMs(0), s.timeMs(2))).containsExactly(3000L, 5000L);
        assertThat(s.max()).isEqualTo(50);
        ring.add(6000, 1);
        assertThat(s.value(0)).as("a copy, not a view").isEqualTo(30);
        assertThatThrownBy(() -> new RingBuffer(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldBoundTheHistoryBySeriesAndBySamples() {
        History history = new History(2, 4);
        History.Key a = new History.Key(History.Metric.SHARE_LAG, "a");
        History.Key b = new History.Key(History.Metric.SHARE_LAG, "b");
        History.Key c = new History.Key(History.Metric.CONSUMER_LAG, "c");
        for (int i = 0; i < 10; i++) {
            history.record(a, i, i);
        }
        history.record(b, 0, 1);
        history.samples(a); // a is now the most recently used
        history.record(c, 0, 2);

        assertThat(history.seriesCount()).isEqualTo(2);
        assertThat(history.samples(b).size()).as("the least recently used series went").isZero();
        assertThat(history.samples(a).size()).isEqualTo(4);
        assertThat(history.samples(a).value(3)).isEqualTo(9);
        history.retainOnly(Set.of(c));
        assertThat(history.seriesCount()).isEqualTo(1);
        assertThat(History.MAX_SERIES * History.POINTS_PER_SERIES * 16L).as("the documented bound, bytes")
                .isLessThan(6_000_000);
    }

    @Test
    void shouldSampleGroupLagOldestAgeAndRequestRatesFromPublishedSnapshots() {
        PierMetrics metrics = new PierMetrics(2);
        History history = new History();
        AtomicLong now = new AtomicLong(10_000);
        Sampler sampler = new Sampler(metrics, history, 1000, now::get);
        metrics.publish(0, List.of(share("g", "t", 0, 0, 4, 300, ShareCounts.NONE)),
                List.of(new LogSnapshot("t", 0, 0, 20, 20, 1)));
        metrics.publish(1, List.of(share("g", "t", 1, 0, 6, 700, ShareCounts.NONE)), List.of());
        metrics.publishGroups(0, new GroupSnapshot(Map.of(), 0, 0,
                List.of(new GroupSnapshot.Committed("c", "t", 0, 15)),
                List.of(new GroupSnapshot.Listed("c", GroupSnapshot.CLASSIC, "Stable"))));
        metrics.onResponse(ApiKeys.PRODUCE, 1_000);
        sampler.sample();
        for (int i = 0; i < 30; i++) {
            metrics.onResponse(ApiKeys.PRODUCE, 1_000);
        }
        now.addAndGet(2_000);
        metrics.publish(1, List.of(share("g", "t", 1, 0, 16, 1700, ShareCounts.NONE)), List.of());
        sampler.sample();

        RingBuffer.Samples lag = history.samples(new History.Key(History.Metric.SHARE_LAG, "g"));
        assertThat(lag.size()).isEqualTo(2);
        assertThat(List.of(lag.value(0), lag.value(1))).containsExactly(10L, 20L);
        assertThat(List.of(lag.timeMs(0), lag.timeMs(1))).containsExactly(10_000L, 12_000L);
        assertThat(history.samples(new History.Key(History.Metric.SHARE_OLDEST_AGE_MS, "g")).value(1)).isEqualTo(1700);
        assertThat(history.samples(new History.Key(History.Metric.CONSUMER_LAG, "c")).value(1)).isEqualTo(5);
        assertThat(sampler.requestRates().get("Produce")).isEqualTo(new Sampler.RequestRate(15.0, 31));

        metrics.publish(1, List.of(), List.of());
        metrics.publish(0, List.of(), List.of());
        sampler.sample();
        assertThat(history.samples(new History.Key(History.Metric.SHARE_LAG, "g")).size())
                .as("a group gone loses its series").isZero();
    }

    @Test
    void shouldDrawAPlotOnlyOnceItHasTwoSamples() {
        RingBuffer ring = new RingBuffer(10);
        ring.add(1000, 0);
        Html one = new Html();
        Plot.draw(one, "p", "Lag <records>", ring.samples(), Plot.Unit.COUNT);
        assertThat(one.toString()).contains("waiting for samples").doesNotContain("polyline")
                .contains("aria-label=\"Lag &lt;records&gt;\"");
        ring.add(2000, 50);
        ring.add(3000, 100);
        Html three = new Html();
        Plot.draw(three, "p", "Lag", ring.samples(), Plot.Unit.COUNT);
        assertThat(three.toString()).contains("data-samples=\"3\"").contains("data-last=\"100\"")
                .contains("points=\"1.0,86.0 160.0,50.0 319.0,14.0\"");
    }

    @Test
    void shouldValidateTheConsoleSettingsNamingTheSetting() {
        ConsoleSettings defaults = ConsoleSettings.fromProperties(Map.of());
        assertThat(defaults.principal()).isEqualTo(new KafkaPrincipal("User", "ANONYMOUS"));
        assertThat(defaults.sampleIntervalMs()).isEqualTo(10_000);
        assertThat(ConsoleSettings.fromProperties(Map.of(ConsoleSettings.PRINCIPAL, "User:ops")).principal())
                .isEqualTo(new KafkaPrincipal("User", "ops"));
        assertThatThrownBy(() -> ConsoleSettings.fromProperties(Map.of(ConsoleSettings.PRINCIPAL, "ops")))
                .isInstanceOf(ConfigException.class).hasMessageContaining(ConsoleSettings.PRINCIPAL);
        assertThatThrownBy(() -> ConsoleSettings.fromProperties(Map.of(ConsoleSettings.SAMPLE_INTERVAL_MS, "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining(ConsoleSettings.SAMPLE_INTERVAL_MS);
    }
}
