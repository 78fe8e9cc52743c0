package io.pier.it.share;

import static io.pier.it.PierCli.columns;
import static io.pier.it.PierCli.pier;
import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.PierCli.Run;
import io.pier.server.Pier;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workload with known releases, rejects and archives, driven by the stock share consumer; the
 * metrics endpoint (scraped over HTTP) and {@code pier share-group} must show exactly that.
 */
@Timeout(120)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShareMetricsIT {
    private static final String TOPIC = "metrics";
    private static final String GROUP = "g-metrics";
    private static final String[] SP = {"group", GROUP, "topic", TOPIC, "partition", "0"};

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("pier.metrics.snapshot.interval.ms", "50");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    /**
     * Given delivery limit 2 and ten records, each its own batch: v0-v2 are rejected; v3 and v4 are
     * released at every delivery (2 releases each, then archived at the limit); v5 is released once
     * then accepted; v6-v9 are accepted at once.
     */
    @Test
    @Order(1)
    void shouldCountExactlyTheReleasesRejectsAndArchivesTheConsumerCaused() throws Exception {
        // node 1's metrics count only what node 1 served: the partition, its produces, may be another's
        Assumptions.assumeFalse(PierExtension.multiNodeGateway(), "metrics of one node of several");
        clients.createTopicReadFromEarliest(TOPIC, 1, GROUP, "share.delivery.count.limit", "2");
        clients.produceEach(TOPIC, 0, "v", 10);
        Map<String, List<Short>> deliveries = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(GROUP, "explicit")) {
            consumer.subscribe(Set.of(TOPIC));
            pollUntil(consumer, Duration.ofSeconds(60), () -> settled(deliveries) == 10, r -> {
                List<Short> seen = deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>());
                seen.add(r.deliveryCount().orElseThrow());
                consumer.acknowledge(r, typeFor(r.value(), seen.size()));
            });
        }
        assertThat(settled(deliveries)).isEqualTo(10);
        assertThat(deliveries.get("v-3")).containsExactly((short) 1, (short) 2);
        assertThat(deliveries.get("v-5")).containsExactly((short) 1, (short) 2);

        ScrapedMetrics m = awaitScrape(s -> s.value("pier_share_start_offset", SP) == 10);

        assertThat(m.value("pier_share_rejects_total", SP)).isEqualTo(3);
        assertThat(m.value("pier_share_releases_total", SP)).isEqualTo(5);
        assertThat(m.value("pier_share_accepts_total", SP)).isEqualTo(5);
        assertThat(m.value("pier_share_archived_records_total", cause("delivery_limit"))).isEqualTo(2);
        assertThat(m.value("pier_share_archived_records_total", cause("rejected"))).isEqualTo(3);
        assertThat(m.value("pier_share_archived_records_total", cause("log_start"))).isZero();
        assertThat(m.value("pier_share_deliveries_total", SP)).isEqualTo(3 + 2 * 2 + 2 + 4);
        assertThat(m.value("pier_share_lock_expiries_total", SP)).isZero();
        assertThat(m.value("pier_share_session_releases_total", SP)).isZero();
        // Accepted: v6-v9 at delivery 1, v5 at delivery 2. Rejected: v0-v2 at delivery 1.
        assertThat(m.value("pier_share_acknowledged_delivery_count_bucket", type("accept", "le", "1.0"))).isEqualTo(4);
        assertThat(m.value("pier_share_acknowledged_delivery_count_bucket", type("accept", "le", "2.0"))).isEqualTo(5);
        assertThat(m.value("pier_share_acknowledged_delivery_count_count", type("accept"))).isEqualTo(5);
        assertThat(m.value("pier_share_acknowledged_delivery_count_sum", type("accept"))).isEqualTo(6);
        assertThat(m.value("pier_share_acknowledged_delivery_count_count", type("reject"))).isEqualTo(3);
        assertThat(m.value("pier_share_acknowledged_delivery_count_bucket", type("reject", "le", "1.0"))).isEqualTo(3);
        assertThat(m.declares("# TYPE pier_share_releases_total counter")).as(m.toString()).isTrue();
        assertThat(m.declares("# TYPE pier_share_acknowledged_delivery_count histogram")).isTrue();
        // Everything settled: nothing in flight, nothing waiting.
        assertThat(m.value("pier_share_lag", SP)).isZero();
        assertThat(m.value("pier_share_in_flight_records", state("available"))).isZero();
        assertThat(m.value("pier_share_in_flight_records", state("acquired"))).isZero();
        assertThat(m.value("pier_share_oldest_unacknowledged_age_seconds", SP)).isZero();
        assertThat(m.value("pier_log_high_watermark", "topic", TOPIC, "partition", "0")).isEqualTo(10);
        assertThat(m.value("pier_log_end_offset", "topic", TOPIC, "partition", "0")).isEqualTo(10);
        assertThat(m.value("pier_log_start_offset", "topic", TOPIC, "partition", "0")).isZero();
        assertThat(m.value("pier_log_size_bytes", "topic", TOPIC, "partition", "0")).isGreaterThan(10 * 60);
        assertThat(m.value("pier_request_duration_seconds_count", "api", "Produce")).isGreaterThanOrEqualTo(10);
        assertThat(m.value("pier_request_duration_seconds_count", "api", "ShareFetch")).isGreaterThan(0);
        assertThat(m.value("pier_request_duration_seconds_count", "api", "CreateTopics")).isEqualTo(1);
    }

    /**
     * Given four more records in one batch that a member acquires and holds: the gauges and the
     * at-a-glance command show them in flight, held by that member, with the lag they make.
     */
    @Test
    @Order(2)
    void shouldShowHeldRecordsInTheGaugesAndTheAtAGlanceCommand() throws Exception {
        // node 1's metrics show the share-partition only if node 1 happens to serve it
        Assumptions.assumeFalse(PierExtension.multiNodeGateway(), "metrics of one node of several");
        clients.produceBatched(TOPIC, 0, "held", 4);
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(GROUP, "explicit")) {
            consumer.subscribe(Set.of(TOPIC));
            List<ConsumerRecord<String, String>> held = new ArrayList<>();
            for (int polls = 0; polls < 150 && held.isEmpty(); polls++) {
                consumer.poll(Duration.ofMillis(200)).forEach(held::add);
            }
            assertThat(held).extracting(ConsumerRecord::offset).containsExactly(10L, 11L, 12L, 13L);
            String member = onlyMember();

            ScrapedMetrics m = awaitScrape(s -> s.value("pier_share_oldest_unacknowledged_age_seconds", SP) > 0.2);

            assertThat(m.value("pier_share_in_flight_records", state("acquired"))).isEqualTo(4);
            assertThat(m.value("pier_share_in_flight_records", state("available"))).isZero();
            assertThat(m.value("pier_share_start_offset", SP)).isEqualTo(10);
            assertThat(m.value("pier_share_end_offset", SP)).isEqualTo(13);
            assertThat(m.value("pier_share_lag", SP)).isEqualTo(4);
            assertThat(m.value("pier_share_oldest_unacknowledged_age_seconds", SP)).isLessThan(60);
            assertThat(m.value("pier_share_member_acquired_records", "group", GROUP, "member", member)).isEqualTo(4);

            Run glance = pier("share-group", "--bootstrap-server", PIER.bootstrapServers(), "--group", GROUP,
                    "--metrics-url", "http://127.0.0.1:" + PIER.pier().metricsPort() + "/metrics");

            assertThat(glance.code()).as(glance.err()).isZero();
            assertThat(glance.out()).contains("Share group " + GROUP + ": state Stable", "1 member(s)");
            assertThat(columns(glance.out(), member)).as(glance.out()).containsSequence("1", "4");
            List<String> row = columns(glance.out(), TOPIC + " ");
            // TOPIC PARTITION START END LOG-END LAG AVAILABLE BACKOFF ACQUIRED ACKNOWLEDGED ARCHIVING ARCHIVED
            // OLDEST-AGE BLOCKED-KEYS
            assertThat(row.subList(0, 12)).as(glance.out())
                    .containsExactly(TOPIC, "0", "10", "13", "14", "4", "0", "0", "4", "0", "0", "0");
            assertThat(Double.parseDouble(row.get(12).replace("s", ""))).isGreaterThan(0.1);
            assertThat(row.get(13)).as("BLOCKED-KEYS of an unordered group").isEqualTo("0");

            for (ConsumerRecord<String, String> r : held) {
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            consumer.commitSync();
        }
    }

    @Test
    @Order(3)
    void shouldPrintWhatTheWireApisGiveWhenTheMetricsCannotBeRead() throws Exception {
        // it reads the records and acknowledgements of the two tests above, skipped with several nodes
        Assumptions.assumeFalse(PierExtension.multiNodeGateway(), "follows the tests skipped with several nodes");
        Run glance = pier("share-group", "--bootstrap-server", PIER.bootstrapServers(), "--group", GROUP,
                "--no-metrics");

        assertThat(glance.code()).as(glance.err()).isZero();
        assertThat(glance.out()).contains("not read (--no-metrics)");
        List<String> row = columns(glance.out(), TOPIC + " ");
        assertThat(row).as(glance.out()).containsExactly(TOPIC, "0", "14", "-", "14", "0", "-", "-", "-", "-", "-", "-", "-", "-");
    }

    @Test
    @Order(4)
    void shouldRefuseAnUnknownOptionWithUsage() {
        Run run = pier("share-group", "--bootstrap-server", PIER.bootstrapServers(), "--grop", GROUP);

        assertThat(run.code()).isEqualTo(2);
        assertThat(run.err()).contains("unknown option --grop", "usage: pier share-group");
    }

    @Test
    @Order(5)
    void shouldServeNoEndpointWhenMetricsAreOff() throws Exception {
        try (Pier off = Pier.builder().config("pier.metrics.enable", "false").start()) {
            assertThat(off.metricsPort()).isEqualTo(-1);
        }
        assertThat(PIER.pier().metricsPort()).isPositive();
    }

    private static AcknowledgeType typeFor(String value, int delivery) {
        return switch (value) {
            case "v-0", "v-1", "v-2" -> AcknowledgeType.REJECT;
            case "v-3", "v-4" -> AcknowledgeType.RELEASE;
            case "v-5" -> delivery == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
            default -> AcknowledgeType.ACCEPT;
        };
    }

    /** Records whose fate is sealed by what the consumer did to them so far. */
    private static long settled(Map<String, List<Short>> deliveries) {
        return deliveries.entrySet().stream().filter(e -> switch (e.getKey()) {
            case "v-3", "v-4", "v-5" -> e.getValue().size() >= 2;
            default -> true;
        }).count();
    }

    private static String[] cause(String cause) {
        return with(SP, "cause", cause);
    }

    private static String[] state(String state) {
        return with(SP, "state", state);
    }

    private static String[] type(String type, String... more) {
        return with(with(SP, "type", type), more);
    }

    private static String[] with(String[] base, String... more) {
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    private static ScrapedMetrics awaitScrape(java.util.function.Predicate<ScrapedMetrics> ready) {
        ScrapedMetrics[] last = new ScrapedMetrics[1];
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
            last[0] = ScrapedMetrics.scrape(PIER.pier().metricsPort());
            return ready.test(last[0]);
        });
        return last[0];
    }

    private String onlyMember() throws Exception {
        try (Admin admin = clients.admin()) {
            var members = admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP).get().members();
            assertThat(members).hasSize(1);
            return members.stream().map(ShareMemberDescription::consumerId).findFirst().orElseThrow();
        }
    }
}
