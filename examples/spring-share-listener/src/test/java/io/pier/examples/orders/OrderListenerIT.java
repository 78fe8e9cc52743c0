package io.pier.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.examples.orders.ProcessingLog.Delivery;
import io.pier.examples.orders.ProcessingLog.Outcome;
import io.pier.testkit.PierExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.core.KafkaTemplate;

/**
 * The Spring Boot application against an in-process Pier: its {@code @KafkaListener} on a share
 * group accepts good orders, releases the one the warehouse fails once (and accepts it on its
 * second delivery), and rejects the poison one, which the broker then writes to the dead-letter
 * topic. Checked both in what the listener saw and in what the broker holds.
 */
@Timeout(60)
class OrderListenerIT {
    private static final String TOPIC = "orders";
    private static final String GROUP = "order-processors";
    private static final String DEAD_LETTERS = "dlq.orders";
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private static ConfigurableApplicationContext app;

    @BeforeAll
    @Timeout(60)
    static void startApplication() {
        // As command-line arguments, which beat application.properties (builder properties do not)
        app = new SpringApplicationBuilder(OrdersApplication.class).main(OrdersApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + PIER.bootstrapServers(),
                "--orders.topic=" + TOPIC,
                "--orders.group=" + GROUP,
                "--orders.dead-letter-topic=" + DEAD_LETTERS,
                "--orders.flaky-skus=umbrella");
    }

    @AfterAll
    static void stopApplication() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void shouldAcceptGoodOrdersRedeliverTheReleasedOneAndDeadLetterThePoisonOne() throws Exception {
        // Given the application's producer and a foreign one that writes a value that is no order
        OrderPublisher publisher = app.getBean(OrderPublisher.class);
        @SuppressWarnings("unchecked")
        KafkaTemplate<String, String> foreign = app.getBean(KafkaTemplate.class);

        // When four orders arrive: offsets 0..3
        publisher.publish(new Order("order-1", "book", 2)).get(10, TimeUnit.SECONDS);
        publisher.publish(new Order("order-2", "umbrella", 1)).get(10, TimeUnit.SECONDS);
        foreign.send(TOPIC, "order-3", "umbrella;lots").get(10, TimeUnit.SECONDS);
        publisher.publish(new Order("order-4", "lamp", 3)).get(10, TimeUnit.SECONDS);

        // Then the listener accepts 1, 2 (on its second delivery) and 4, and rejects 3
        ProcessingLog log = app.getBean(ProcessingLog.class);
        List<Delivery> expected = List.of(
                new Delivery("order-1", 0, 1, Outcome.ACCEPTED),
                new Delivery("order-2", 1, 1, Outcome.RELEASED),
                new Delivery("order-2", 1, 2, Outcome.ACCEPTED),
                new Delivery("order-3", 2, 1, Outcome.REJECTED),
                new Delivery("order-4", 3, 1, Outcome.ACCEPTED));
        await("five deliveries").atMost(WAIT)
                .untilAsserted(() -> assertThat(log.deliveries()).hasSizeGreaterThanOrEqualTo(expected.size()));
        assertThat(log.deliveries()).containsExactlyInAnyOrderElementsOf(expected);

        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            // and the broker has every record past the group's start offset: each one acknowledged
            // or rejected, none left to deliver
            TopicPartition orders = new TopicPartition(TOPIC, 0);
            await("every order acknowledged or rejected").atMost(WAIT).untilAsserted(() -> {
                SharePartitionOffsetInfo info = admin.listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                        .partitionsToOffsetInfo(GROUP).get(5, TimeUnit.SECONDS).get(orders);
                assertThat(info).as("share-partition %s of %s", orders, GROUP).isNotNull();
                assertThat(info.startOffset()).isEqualTo(4);
                assertThat(info.lag()).contains(0L);
            });
            ShareGroupDescription group = admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP)
                    .get(5, TimeUnit.SECONDS);
            assertThat(group.members()).as("the application's one share consumer").hasSize(1);
        }

        // and exactly one dead letter, for the rejected record, on its first delivery
        List<ConsumerRecord<String, String>> letters = readDeadLetters();
        assertThat(letters).hasSize(1);
        ConsumerRecord<String, String> letter = letters.get(0);
        assertThat(letter.key()).isEqualTo("order-3");
        assertThat(letter.value()).isEqualTo("umbrella;lots");
        assertThat(headers(letter))
                .containsEntry("__dlq.errors.topic", TOPIC)
                .containsEntry("__dlq.errors.partition", "0")
                .containsEntry("__dlq.errors.offset", "2")
                .containsEntry("__dlq.errors.group", GROUP)
                .containsEntry("__dlq.errors.delivery.count", "1")
                .containsEntry("__dlq.errors.message", "Offset rejected by client.");

        // and nothing was delivered again meanwhile
        assertThat(log.deliveries()).containsExactlyInAnyOrderElementsOf(expected);
    }

    /** Every record of the dead-letter topic, once it has at least one. */
    private static List<ConsumerRecord<String, String>> readDeadLetters() {
        TopicPartition dlq = new TopicPartition(DEAD_LETTERS, 0);
        List<ConsumerRecord<String, String>> letters = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                Map.<String, Object>of("bootstrap.servers", PIER.bootstrapServers()),
                new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(dlq));
            consumer.seekToBeginning(List.of(dlq));
            await("a dead letter in " + DEAD_LETTERS).atMost(WAIT).pollInSameThread()
                    .until(() -> consumer.endOffsets(List.of(dlq)).get(dlq) > 0);
            long endOffset = consumer.endOffsets(List.of(dlq)).get(dlq);
            await("the dead letters read").atMost(WAIT).pollInSameThread().until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(letters::add);
                return consumer.position(dlq) >= endOffset;
            });
        }
        return letters;
    }

    private static Map<String, String> headers(ConsumerRecord<String, String> record) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (Header header : record.headers()) {
            headers.put(header.key(), header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8));
        }
        return headers;
    }
}
