package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Classic static membership with the real KafkaConsumer ({@code group.instance.id},
 * {@code group.protocol=classic}): a member restarted within its session timeout gets the same
 * partitions back, and the other member sees no rebalance.
 */
@Timeout(120)
class ClassicStaticMembershipIT {
    private static final Duration WAIT = Duration.ofSeconds(45);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    @Test
    void shouldGiveARestartedStaticMemberItsPartitionsBackWithoutARebalance() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("classic-static", 4, (short) 1))).all().get();
        }
        AtomicInteger aRebalances = new AtomicInteger();
        ConsumerRebalanceListener countingA = new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                aRebalances.incrementAndGet();
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                aRebalances.incrementAndGet();
            }
        };
        try (KafkaConsumer<String, String> a = GroupClients.consumer(PIER.bootstrapServers(), "classic-static-group",
                        "classic", "instance-a");
                KafkaConsumer<String, String> b = GroupClients.consumer(PIER.bootstrapServers(), "classic-static-group",
                        "classic", "instance-b")) {
            a.subscribe(List.of("classic-static"), countingA);
            b.subscribe(List.of("classic-static"));
            await().atMost(WAIT).until(() -> {
                a.poll(Duration.ofMillis(50));
                b.poll(Duration.ofMillis(50));
                return a.assignment().size() == 2 && b.assignment().size() == 2;
            });
            Set<TopicPartition> first = Set.copyOf(b.assignment());
            Set<TopicPartition> aHas = Set.copyOf(a.assignment());
            int before = aRebalances.get();

            // b's process restarts: a static member's close sends no LeaveGroup
            b.close();
            try (KafkaConsumer<String, String> b2 = GroupClients.consumer(PIER.bootstrapServers(),
                    "classic-static-group", "classic", "instance-b")) {
                b2.subscribe(List.of("classic-static"));
                await().atMost(WAIT).until(() -> {
                    a.poll(Duration.ofMillis(50));
                    b2.poll(Duration.ofMillis(50));
                    return b2.assignment().size() == 2;
                });
                // A couple more rounds of a's heartbeats, to see a rebalance if one was started
                for (int i = 0; i < 10; i++) {
                    a.poll(Duration.ofMillis(100));
                    b2.poll(Duration.ofMillis(10));
                }
                assertThat(b2.assignment()).isEqualTo(first);
                assertThat(a.assignment()).isEqualTo(aHas);
                assertThat(aRebalances.get()).as("rebalance callbacks on a").isEqualTo(before);
            }
        }
    }
}
