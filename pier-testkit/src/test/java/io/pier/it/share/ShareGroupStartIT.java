package io.pier.it.share;

import static io.pier.it.share.ShareClients.pollAndAck;
import static io.pier.it.share.ShareClients.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Where a share group starts (share.auto.offset.reset) and that groups are independent. */
@Timeout(120)
class ShareGroupStartIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldSkipRecordsProducedBeforeFirstFetchWithDefaultLatest() throws Exception {
        clients.createTopic("reset-latest", 1);
        clients.produce("reset-latest", 0, "early", 20);
        List<String> got = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-latest", "explicit");
                KafkaProducer<String, String> producer = clients.producer()) {
            consumer.subscribe(Set.of("reset-latest"));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            // The group's start is fixed at its first fetch; keep producing until records after it arrive.
            for (int i = 0; i < 150 && System.nanoTime() < deadline
                    && got.stream().noneMatch(v -> v.startsWith("late-")); i++) {
                producer.send(new ProducerRecord<>("reset-latest", 0, null, "late-" + i)).get();
                got.addAll(values(pollAndAck(consumer, 1, Duration.ofMillis(200), AcknowledgeType.ACCEPT)));
            }
        }
        assertThat(got).anyMatch(v -> v.startsWith("late-")).noneMatch(v -> v.startsWith("early-"));
    }

    @Test
    void shouldDeliverRecordsProducedBeforeFirstFetchWithEarliest() throws Exception {
        clients.createTopic("reset-earliest", 1);
        clients.produce("reset-earliest", 0, "early", 20);
        clients.setGroupConfig("g-earliest", "share.auto.offset.reset", "earliest");
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-earliest", "explicit")) {
            consumer.subscribe(Set.of("reset-earliest"));
            List<ConsumerRecord<String, String>> got =
                    pollAndAck(consumer, 20, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            assertThat(values(got)).containsExactlyElementsOf(
                    IntStream.range(0, 20).mapToObj(i -> "early-" + i).toList());
        }
    }

    @Test
    void shouldStartAtRecordsOfTheLastHourWithByDuration() throws Exception {
        clients.createTopic("reset-duration", 1);
        long now = System.currentTimeMillis();
        long twoHoursAgo = now - Duration.ofHours(2).toMillis();
        try (KafkaProducer<String, String> producer = clients.producer()) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>("reset-duration", 0, twoHoursAgo + i, null, "old-" + i)).get();
            }
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>("reset-duration", 0, now + i, null, "recent-" + i)).get();
            }
        }
        clients.setGroupConfig("g-duration", "share.auto.offset.reset", "by_duration:PT1H");
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-duration", "explicit")) {
            consumer.subscribe(Set.of("reset-duration"));
            List<ConsumerRecord<String, String>> got =
                    pollAndAck(consumer, 10, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            assertThat(values(got)).containsExactlyElementsOf(
                    IntStream.range(0, 10).mapToObj(i -> "recent-" + i).toList());
        }
    }

    @Test
    void shouldGiveNewConsumerItsFirstRecordsPromptly() throws Exception {
        clients.createTopicReadFromEarliest("first-records", 1, "g-first");
        clients.produce("first-records", 0, "f", 5);
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-first", "explicit")) {
            long start = System.nanoTime();
            consumer.subscribe(Set.of("first-records"));
            List<ConsumerRecord<String, String>> got =
                    pollAndAck(consumer, 1, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            long elapsedMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            System.out.println("First records reached a new share consumer " + elapsedMs
                    + " ms after subscribe (" + got.size() + " records)");
            assertThat(values(got)).isNotEmpty().allMatch(v -> v.startsWith("f-"));
        }
    }

    @Test
    void shouldKeepTwoGroupsOnOneTopicIndependent() throws Exception {
        clients.createTopicReadFromEarliest("two-groups", 2, "g-two-a");
        clients.setGroupConfig("g-two-b", "share.auto.offset.reset", "earliest");
        clients.produce("two-groups", 0, "p0", 50);
        clients.produce("two-groups", 1, "p1", 50);
        List<String> all = new ArrayList<>();
        IntStream.range(0, 50).forEach(i -> {
            all.add("p0-" + i);
            all.add("p1-" + i);
        });
        // Group A accepts everything first.
        try (KafkaShareConsumer<String, String> a = clients.consumer("g-two-a", "explicit")) {
            a.subscribe(Set.of("two-groups"));
            List<ConsumerRecord<String, String>> got = pollAndAck(a, 100, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            assertThat(values(got)).containsExactlyInAnyOrderElementsOf(all);
        }
        // Group B still gets every record, on its first delivery; it rejects them all.
        try (KafkaShareConsumer<String, String> b = clients.consumer("g-two-b", "explicit")) {
            b.subscribe(Set.of("two-groups"));
            List<ConsumerRecord<String, String>> got = pollAndAck(b, 100, Duration.ofSeconds(30), AcknowledgeType.REJECT);
            assertThat(values(got)).containsExactlyInAnyOrderElementsOf(all);
            assertThat(got).allSatisfy(r -> assertThat(r.deliveryCount()).hasValue((short) 1));
        }
        // New records reach both groups; B's rejects did not touch A, A's accepts did not touch B.
        clients.produce("two-groups", 0, "new", 10);
        List<String> fresh = IntStream.range(0, 10).mapToObj(i -> "new-" + i).toList();
        try (KafkaShareConsumer<String, String> a = clients.consumer("g-two-a", "explicit");
                KafkaShareConsumer<String, String> b = clients.consumer("g-two-b", "explicit")) {
            a.subscribe(Set.of("two-groups"));
            b.subscribe(Set.of("two-groups"));
            assertThat(values(pollAndAck(a, 10, Duration.ofSeconds(30), AcknowledgeType.ACCEPT)))
                    .containsExactlyElementsOf(fresh);
            assertThat(values(pollAndAck(b, 10, Duration.ofSeconds(30), AcknowledgeType.ACCEPT)))
                    .containsExactlyElementsOf(fresh);
        }
    }
}
