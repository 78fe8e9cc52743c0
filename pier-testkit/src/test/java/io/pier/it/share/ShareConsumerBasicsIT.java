package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(120)
class ShareConsumerBasicsIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldDeliverEveryRecordOnceWithExplicitAccept() throws Exception {
        clients.createTopicReadFromEarliest("basic", 1, "g-basic");
        clients.produce("basic", 0, "v", 100);
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-basic", "explicit")) {
            consumer.subscribe(Set.of("basic"));
            long deadline = System.currentTimeMillis() + 30_000;
            while (seen.size() < 100 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    seen.merge(r.value(), 1, Integer::sum);
                    assertThat(r.deliveryCount()).hasValue((short) 1);
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitSync();
            }
        }
        assertThat(seen).hasSize(100).allSatisfy((k, v) -> assertThat(v).isEqualTo(1));
    }

    @Test
    void shouldRedeliverReleasedRecordWithHigherDeliveryCount() throws Exception {
        clients.createTopicReadFromEarliest("release", 1, "g-release");
        clients.produce("release", 0, "r", 1);
        List<Short> counts = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-release", "explicit")) {
            consumer.subscribe(Set.of("release"));
            long deadline = System.currentTimeMillis() + 30_000;
            while (counts.size() < 2 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    counts.add(r.deliveryCount().orElseThrow());
                    consumer.acknowledge(r, counts.size() == 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                }
                consumer.commitSync();
            }
        }
        assertThat(counts).containsExactly((short) 1, (short) 2);
    }
}
