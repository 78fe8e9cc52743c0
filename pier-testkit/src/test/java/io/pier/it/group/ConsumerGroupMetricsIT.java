package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ScrapedMetrics;
import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The group metrics with the real clients: a classic and a consumer-protocol KafkaConsumer group
 * and a share group on one broker, each group's state, the rebalances their members caused, and
 * known commits with the lag they leave, scraped over HTTP.
 */
@Timeout(150)
class ConsumerGroupMetricsIT {
    private static final Duration WAIT = Duration.ofSeconds(45);
    private static final String TOPIC = "cgm";
    private static final String CLASSIC = "cgm-classic";
    private static final String CONSUMER = "cgm-consumer";
    private static final String SHARE = "cgm-share";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("pier.metrics.snapshot.interval.ms", "50",
            "group.initial.rebalance.delay.ms", "0",
            "group.consumer.min.session.timeout.ms", "1000", "group.consumer.session.timeout.ms", "10000",
            "group.consumer.min.heartbeat.interval.ms", "100", "group.consumer.heartbeat.interval.ms", "200");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    private static KafkaConsumer<String, String> consumer(String group, String protocol) {
        return GroupClients.consumer(PIER.bootstrapServers(), group, protocol, null);
    }

    /**
     * Given 10 records on partition 0 and 6 on partition 1, read by a classic and a consumer-protocol
     * group that commit known offsets, and a share consumer in its group: each group counts once in
     * its type's Stable state, and each commit shows with high watermark minus it as lag; once the
     * members leave, the groups are Empty, the leaves counted as rebalances, and the lag follows
     * the high watermark.
     */
    @Test
    void shouldShowGroupsByTypeAndStateRebalancesAndCommittedOffsetsWithTheirLag() throws Exception {
        clients.createTopic(TOPIC, 2);
        clients.produce(TOPIC, 0, "p0", 10);
        clients.produce(TOPIC, 1, "p1", 6);
        double classicRebalances;
        double consumerRebalances;
        try (KafkaConsumer<String, String> classic = consumer(CLASSIC, "classic");
                KafkaConsumer<String, String> kip848 = consumer(CONSUMER, "consumer");
                KafkaShareConsumer<String, String> share = clients.consumer(SHARE, "implicit")) {
            classic.subscribe(List.of(TOPIC));
            kip848.subscribe(List.of(TOPIC));
            share.subscribe(Set.of(TOPIC));
            readAll(classic, 16);
            readAll(kip848, 16);
            classic.commitSync(Map.of(P0, new OffsetAndMetadata(4), P1, new OffsetAndMetadata(6)));
            kip848.commitSync(Map.of(P0, new OffsetAndMetadata(10), P1, new OffsetAndMetadata(1)));

            ScrapedMetrics m = awaitScrape(s -> {
                share.poll(Duration.ofMillis(20)); // joins, then stays in its group
                return groups(s, "share", "Stable") == 1 && groups(s, "classic", "Stable") == 1
                        && groups(s, "consumer", "Stable") == 1
                        && s.value("pier_consumer_group_committed_offset", offset(CONSUMER, P1)) == 1;
            });

            assertThat(groupsByKind(m)).as(m.toString()).isEqualTo(expected(Map.of(
                    "classic/Stable", 1, "consumer/Stable", 1, "share/Stable", 1)));
            assertThat(m.value("pier_consumer_group_committed_offset", offset(CLASSIC, P0))).isEqualTo(4);
            assertThat(m.value("pier_consumer_group_committed_offset", offset(CLASSIC, P1))).isEqualTo(6);
            assertThat(m.value("pier_consumer_group_committed_offset", offset(CONSUMER, P0))).isEqualTo(10);
            assertThat(m.value("pier_consumer_group_lag", offset(CLASSIC, P0))).isEqualTo(6);
            assertThat(m.value("pier_consumer_group_lag", offset(CLASSIC, P1))).isZero();
            assertThat(m.value("pier_consumer_group_lag", offset(CONSUMER, P0))).isZero();
            assertThat(m.value("pier_consumer_group_lag", offset(CONSUMER, P1))).isEqualTo(5);
            assertThat(m.value("pier_consumer_group_lag", offset(SHARE, P0))).as("share groups commit no offsets")
                    .isNaN();
            // One member each: at least the generation (classic) or epoch (consumer) it joined in.
            classicRebalances = m.value("pier_group_rebalances_total", "type", "classic");
            consumerRebalances = m.value("pier_group_rebalances_total", "type", "consumer");
            assertThat(classicRebalances).isGreaterThanOrEqualTo(1);
            assertThat(consumerRebalances).isGreaterThanOrEqualTo(1);
            assertThat(m.declares("# TYPE pier_group_rebalances_total counter")).isTrue();
            assertThat(m.declares("# TYPE pier_consumer_group_lag gauge")).isTrue();
        }

        clients.produce(TOPIC, 1, "more", 3);
        ScrapedMetrics m = awaitScrape(s -> groups(s, "classic", "Empty") == 1 && groups(s, "consumer", "Empty") == 1
                && groups(s, "share", "Empty") == 1
                && s.value("pier_consumer_group_lag", offset(CONSUMER, P1)) == 8);

        assertThat(groupsByKind(m)).as(m.toString()).isEqualTo(expected(Map.of(
                "classic/Empty", 1, "consumer/Empty", 1, "share/Empty", 1)));
        // A leaving member rebalances its group: a generation (classic), an epoch bump (consumer).
        assertThat(m.value("pier_group_rebalances_total", "type", "classic")).isGreaterThan(classicRebalances);
        assertThat(m.value("pier_group_rebalances_total", "type", "consumer")).isGreaterThan(consumerRebalances);
        assertThat(m.value("pier_consumer_group_committed_offset", offset(CLASSIC, P1))).isEqualTo(6);
        assertThat(m.value("pier_consumer_group_lag", offset(CLASSIC, P1))).isEqualTo(3);
        assertThat(m.value("pier_consumer_group_lag", offset(CLASSIC, P0))).isEqualTo(6);
        assertThat(m.value("pier_log_high_watermark", "topic", TOPIC, "partition", "1")).isEqualTo(9);
    }

    private static void readAll(KafkaConsumer<String, String> c, int count) {
        int[] read = {0};
        await().atMost(WAIT).until(() -> {
            read[0] += c.poll(Duration.ofMillis(100)).count();
            return read[0] >= count;
        });
        assertThat(read[0]).isEqualTo(count);
    }

    private static String[] offset(String group, TopicPartition tp) {
        return new String[] {"group", group, "topic", tp.topic(), "partition", String.valueOf(tp.partition())};
    }

    private static double groups(ScrapedMetrics m, String type, String state) {
        return m.value("pier_groups", "type", type, "state", state);
    }

    /** Every series of {@code pier_groups} that Kafka's state machines have, as "type/state" to count. */
    private static Map<String, Double> groupsByKind(ScrapedMetrics m) {
        Map<String, Double> all = new LinkedHashMap<>();
        for (String kind : expected(Map.of()).keySet()) {
            String[] typeAndState = kind.split("/");
            all.put(kind, groups(m, typeAndState[0], typeAndState[1]));
        }
        return all;
    }

    /** Zero for every type and state but {@code nonZero}. */
    private static Map<String, Double> expected(Map<String, Integer> nonZero) {
        Map<String, Double> all = new LinkedHashMap<>();
        for (String state : List.of("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")) {
            all.put("classic/" + state, 0.0);
        }
        for (String state : List.of("Empty", "Assigning", "Reconciling", "Stable", "Dead")) {
            all.put("consumer/" + state, 0.0);
        }
        for (String state : List.of("Empty", "Stable", "Dead")) {
            all.put("share/" + state, 0.0);
        }
        nonZero.forEach((kind, n) -> all.put(kind, n.doubleValue()));
        return all;
    }

    private static ScrapedMetrics awaitScrape(Predicate<ScrapedMetrics> ready) {
        ScrapedMetrics[] last = new ScrapedMetrics[1];
        await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
            last[0] = ScrapedMetrics.scrape(PIER.pier().metricsPort());
            return ready.test(last[0]);
        });
        return last[0];
    }
}
