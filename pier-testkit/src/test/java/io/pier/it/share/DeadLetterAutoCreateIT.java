package io.pier.it.share;

import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code errors.deadletterqueue.auto.create.topics.enable=true}: a group's dead-letter topic that
 * does not exist is created on first use, enabled for share groups, and gets the letter.
 */
@Timeout(90)
class DeadLetterAutoCreateIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "errors.deadletterqueue.auto.create.topics.enable", "true");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void missingQueueTopicIsCreatedAndGetsTheLetter() throws Exception {
        clients.createTopicReadFromEarliest("auto", 1, "g-auto", "errors.deadletterqueue.topic.name", "dlq.auto");
        clients.produceEach("auto", 0, "v", 2);

        int[] seen = {0};
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-auto", "explicit")) {
            consumer.subscribe(Set.of("auto"));
            pollUntil(consumer, Duration.ofSeconds(30), () -> seen[0] >= 2, r -> {
                seen[0]++;
                consumer.acknowledge(r, r.value().equals("v-0") ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
            });
        }
        assertThat(seen[0]).isEqualTo(2);

        ConfigResource queue = new ConfigResource(ConfigResource.Type.TOPIC, "dlq.auto");
        try (Admin admin = clients.admin()) {
            // (created when the first letter is due: on a gateway, by whichever node serves the partition)
            await().atMost(Duration.ofSeconds(20))
                    .ignoreExceptionsMatching(e -> e.getCause() instanceof UnknownTopicOrPartitionException)
                    .untilAsserted(() -> {
                Config config = admin.describeConfigs(List.of(queue)).all().get().get(queue);
                assertThat(config.get("errors.deadletterqueue.group.enable").value()).isEqualTo("true");
                    });
        }
        assertThat(readAll("dlq.auto", 1, Duration.ofSeconds(20))).singleElement()
                .satisfies(letter -> assertThat(new String(letter.headers().lastHeader("__dlq.errors.offset").value(),
                        java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("0"));
    }

    /** Reads the topic from the start, then half a second more: a second letter would show up there. */
    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int atLeast, Duration max) {
        return clients.readFromStart(topic, atLeast, max, Duration.ofMillis(500));
    }
}
