package io.pier.it.share;

import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pier's release backoff ({@code pier.share.release.backoff.*}) with the stock share consumer: a
 * released record is not redelivered before its delay, also across a restart, and the records
 * behind it flow meanwhile. The delays are lower bounds the broker must keep; nothing here times
 * how fast anything is.
 */
@Timeout(120)
class ReleaseBackoffIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("pier.metrics.snapshot.interval.ms", "50");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void releasedRecordWaitsWhileLaterRecordsFlow() throws Exception {
        long delayMs = 4_000;
        clients.createTopicReadFromEarliest("backoff", 1, "g-backoff",
                "pier.share.release.backoff.initial.ms", Long.toString(delayMs));
        clients.produceEach("backoff", 0, "first", 1);

        long releasedAt;
        List<String> flowedMeanwhile = new ArrayList<>();
        long redeliveredAt = -1;
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-backoff", "explicit")) {
            consumer.subscribe(Set.of("backoff"));
            releasedAt = releaseOne(consumer, "first-0");
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(
                    ScrapedMetrics.of(PIER, "pier_share_backoff_records", "group", "g-backoff"))
                    .isEqualTo(1));

            clients.produceEach("backoff", 0, "later", 5);
            long[] back = {-1};
            pollUntil(consumer, Duration.ofSeconds(30), () -> back[0] > 0, r -> {
                if (r.value().equals("first-0")) {
                    back[0] = System.currentTimeMillis();
                    assertThat(r.deliveryCount()).contains((short) 2);
                } else {
                    flowedMeanwhile.add(r.value());
                }
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            });
            redeliveredAt = back[0];
        }
        assertThat(redeliveredAt).as("redelivered at all").isPositive();
        assertThat(redeliveredAt - releasedAt).as("waited its backoff").isGreaterThanOrEqualTo(delayMs - 50);
        assertThat(flowedMeanwhile).as("the records behind it were not held up")
                .containsExactly("later-0", "later-1", "later-2", "later-3", "later-4");
    }

    @Test
    void backoffSurvivesARestart() throws Exception {
        long delayMs = 5_000;
        clients.createTopicReadFromEarliest("backoff-restart", 1, "g-backoff-restart",
                "pier.share.release.backoff.initial.ms", Long.toString(delayMs));
        clients.produceEach("backoff-restart", 0, "v", 1);
        long releasedAt;
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-backoff-restart", "explicit")) {
            consumer.subscribe(Set.of("backoff-restart"));
            releasedAt = releaseOne(consumer, "v-0");
        }

        PIER.restart();

        long[] back = {-1};
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-backoff-restart", "explicit")) {
            consumer.subscribe(Set.of("backoff-restart"));
            pollUntil(consumer, Duration.ofSeconds(40), () -> back[0] > 0, r -> {
                back[0] = System.currentTimeMillis();
                assertThat(r.deliveryCount()).contains((short) 2);
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            });
        }
        assertThat(back[0]).as("redelivered after the restart").isPositive();
        assertThat(back[0] - releasedAt).as("the restart kept the rest of its backoff")
                .isGreaterThanOrEqualTo(delayMs - 50);
    }

    /**
     * Polls until one record comes, the one expected, RELEASEs it and commits; returns the time
     * just before the RELEASE went out. The backoff runs from when the broker takes it, which is
     * later (on a gateway, the answer comes only once the upstream holds it, 100 ms and more).
     */
    private static long releaseOne(KafkaShareConsumer<String, String> consumer, String expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            if (got.isEmpty()) {
                continue;
            }
            assertThat(got).extracting(ConsumerRecord::value).containsExactly(expected);
            long sending = System.currentTimeMillis();
            consumer.acknowledge(got.get(0), AcknowledgeType.RELEASE);
            consumer.commitSync();
            return sending;
        }
        throw new AssertionError("no record within 20 s");
    }
}
