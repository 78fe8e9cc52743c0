package io.pier.it.share;

import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Dead-letter queues of share groups (KIP-1191) with the stock clients: what dies gets exactly one letter. */
@Timeout(120)
class DeadLetterQueueIT {
    private static final int LOCK_MS = 2000;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "pier.metrics.snapshot.interval.ms", "50",
            "group.share.min.record.lock.duration.ms", "1000",
            "group.share.record.lock.duration.ms", String.valueOf(LOCK_MS));

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void rejectedRecordGetsOneDeadLetterWithKafkasHeaders() throws Exception {
        createDeadLetterTopic("dlq.reject", true);
        clients.createTopicReadFromEarliest("reject", 1, "g-reject",
                "errors.deadletterqueue.topic.name", "dlq.reject");
        produceWithKeys("reject", List.of("ok-0", "bad", "ok-2"));

        acknowledgeUntilSeen("g-reject", "reject", 3, r -> r.value().equals("bad") ? AcknowledgeType.REJECT
                : AcknowledgeType.ACCEPT);

        List<ConsumerRecord<byte[], byte[]>> letters = readAll("dlq.reject", 1, Duration.ofSeconds(20));
        assertThat(letters).hasSize(1);
        ConsumerRecord<byte[], byte[]> letter = letters.get(0);
        assertThat(headers(letter)).containsExactly(
                Map.entry("__dlq.errors.topic", "reject"),
                Map.entry("__dlq.errors.partition", "0"),
                Map.entry("__dlq.errors.offset", "1"),
                Map.entry("__dlq.errors.group", "g-reject"),
                Map.entry("__dlq.errors.delivery.count", "1"),
                Map.entry("__dlq.errors.message", "Offset rejected by client."));
        assertThat(letter.key()).as("no copy by default").isNull();
        assertThat(letter.value()).isNull();
        awaitStartOffset("g-reject", "reject", 3);

        awaitMetric("pier_share_dead_letters_total", "g-reject", "reject", 1);
        assertThat(metric("pier_share_dead_letter_failures_total", "group", "g-reject")).isZero();

        // Still exactly one, a while later.
        Thread.sleep(500);
        assertThat(readAll("dlq.reject", 2, Duration.ofSeconds(2))).hasSize(1);
    }

    @Test
    void poisonRecordReleasedToTheLimitIsCopiedToTheQueue() throws Exception {
        createDeadLetterTopic("dlq.poison", true);
        clients.createTopicReadFromEarliest("poison", 1, "g-poison",
                "share.delivery.count.limit", "3",
                "errors.deadletterqueue.topic.name", "dlq.poison",
                "errors.deadletterqueue.copy.record.enable", "true");
        produceWithKeys("poison", List.of("poison", "fine"));

        List<Short> poisonDeliveries = new ArrayList<>();
        acknowledgeUntilSeen("g-poison", "poison", 4, r -> {
            if (r.value().equals("poison")) {
                poisonDeliveries.add(r.deliveryCount().orElseThrow());
                return AcknowledgeType.RELEASE;
            }
            return AcknowledgeType.ACCEPT;
        });
        assertThat(poisonDeliveries).containsExactly((short) 1, (short) 2, (short) 3);

        List<ConsumerRecord<byte[], byte[]>> letters = readAll("dlq.poison", 1, Duration.ofSeconds(20));
        assertThat(letters).hasSize(1);
        ConsumerRecord<byte[], byte[]> letter = letters.get(0);
        assertThat(new String(letter.key(), StandardCharsets.UTF_8)).isEqualTo("key-poison");
        assertThat(new String(letter.value(), StandardCharsets.UTF_8)).isEqualTo("poison");
        assertThat(headers(letter))
                .containsEntry("origin", "test")
                .containsEntry("__dlq.errors.offset", "0")
                .containsEntry("__dlq.errors.delivery.count", "3")
                .containsEntry("__dlq.errors.message", "Offset delivery count exceeded the threshold.");
        awaitStartOffset("g-poison", "poison", 2);
    }

    @Test
    void largeCopiedRecordsAllGetTheirLetter() throws Exception {
        createDeadLetterTopic("dlq.large", true);
        clients.createTopicReadFromEarliest("large", 1, "g-large",
                "errors.deadletterqueue.topic.name", "dlq.large",
                "errors.deadletterqueue.copy.record.enable", "true");
        String big = "x".repeat(300_000);
        List<String> values = List.of("a" + big, "b" + big, "c" + big, "d" + big);
        produceWithKeys("large", values);

        // All four rejected in one acknowledgement: their letters (about 1.2 MB) need several appends.
        int[] seen = {0};
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-large", "explicit",
                "max.partition.fetch.bytes", "5000000", "fetch.max.bytes", "5000000")) {
            consumer.subscribe(Set.of("large"));
            pollUntil(consumer, Duration.ofSeconds(30), () -> seen[0] >= 4, r -> {
                seen[0]++;
                consumer.acknowledge(r, AcknowledgeType.REJECT);
            });
        }
        assertThat(seen[0]).isEqualTo(4);

        List<ConsumerRecord<byte[], byte[]>> letters = readAll("dlq.large", 4, Duration.ofSeconds(20));
        assertThat(letters).extracting(r -> new String(r.value(), StandardCharsets.UTF_8).substring(0, 1))
                .containsExactlyInAnyOrder("a", "b", "c", "d");
        assertThat(letters).allSatisfy(r -> assertThat(r.value()).hasSize(300_001));
        awaitStartOffset("g-large", "large", 4);
    }

    @Test
    void queueTopicNotEnabledForGroupsArchivesWithoutALetter() throws Exception {
        createDeadLetterTopic("dlq.closed", false);
        clients.createTopicReadFromEarliest("closed", 1, "g-closed",
                "errors.deadletterqueue.topic.name", "dlq.closed");
        produceWithKeys("closed", List.of("bad", "ok-1"));

        acknowledgeUntilSeen("g-closed", "closed", 2, r -> r.value().equals("bad") ? AcknowledgeType.REJECT
                : AcknowledgeType.ACCEPT);

        awaitStartOffset("g-closed", "closed", 2); // archived, as Kafka does
        assertThat(readAll("dlq.closed", 1, Duration.ofSeconds(2))).isEmpty();
        awaitMetric("pier_share_dead_letter_failures_total", "g-closed", "closed", 1);
        assertThat(metric("pier_share_dead_letters_total", "group", "g-closed")).isZero();
    }

    private void createDeadLetterTopic(String name, boolean enabled) throws Exception {
        try (Admin admin = clients.admin()) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1)
                    .configs(Map.of("errors.deadletterqueue.group.enable", Boolean.toString(enabled))))).all().get();
        }
    }

    /** Produces one record per value, keyed "key-" + value, with header origin=test. */
    private void produceWithKeys(String topic, List<String> values) throws Exception {
        try (KafkaProducer<String, String> producer = clients.producer()) {
            for (String v : values) {
                ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "key-" + v, v);
                r.headers().add("origin", "test".getBytes(StandardCharsets.UTF_8));
                producer.send(r).get();
            }
        }
    }

    /** Polls with one explicit-mode consumer until {@code deliveries} records were delivered. */
    private void acknowledgeUntilSeen(String group, String topic, int deliveries,
            java.util.function.Function<ConsumerRecord<String, String>, AcknowledgeType> verdict) {
        int[] seen = {0};
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            pollUntil(consumer, Duration.ofSeconds(30), () -> seen[0] >= deliveries, r -> {
                seen[0]++;
                consumer.acknowledge(r, verdict.apply(r));
            });
        }
        assertThat(seen[0]).isEqualTo(deliveries);
    }

    /** Reads a one-partition topic from the start until {@code atLeast} records came or {@code max} passed. */
    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int atLeast, Duration max) {
        return clients.readFromStart(topic, atLeast, max, Duration.ZERO);
    }

    private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            out.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static double metric(String name, String... labelPairs) throws Exception {
        return ScrapedMetrics.of(PIER, name, labelPairs);
    }

    private static void awaitMetric(String name, String group, String topic, double expected) {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                metric(name, "group", group, "topic", topic, "partition", "0")).isEqualTo(expected));
    }

    private void awaitStartOffset(String group, String topic, long expected) {
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(startOffset(group, topic)).isEqualTo(expected));
    }

    private long startOffset(String group, String topic) throws Exception {
        try (Admin admin = clients.admin()) {
            Map<TopicPartition, SharePartitionOffsetInfo> info = admin
                    .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo p = info.get(new TopicPartition(topic, 0));
            return p == null ? -1 : p.startOffset();
        }
    }
}
