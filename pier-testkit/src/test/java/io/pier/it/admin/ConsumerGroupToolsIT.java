package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Kafka's kafka-consumer-groups (kafka-tools 4.4) against Pier: --list and --describe, of a group
 * of either protocol (the tool asks ConsumerGroupDescribe first, DescribeGroups for a classic group).
 */
@Timeout(120)
class ConsumerGroupToolsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void shouldListAndDescribeAConsumerGroupWithItsOffsetsAndLag(String protocol) throws Exception {
        String topic = "tool-orders-" + protocol;
        String group = "tool-readers-" + protocol;
        // Given a consumer group that consumed and committed 10 of 12 records of a 1-partition topic
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", PIER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, "v" + i)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
        Properties cp = new Properties();
        cp.put("bootstrap.servers", PIER.bootstrapServers());
        cp.put("group.id", group);
        cp.put("group.protocol", protocol);
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        cp.put("max.poll.records", "10");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            int[] seen = {0};
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                seen[0] += consumer.poll(Duration.ofMillis(100)).count();
                return seen[0] >= 10;
            });
            consumer.commitSync(Map.of(new org.apache.kafka.common.TopicPartition(topic, 0),
                    new org.apache.kafka.clients.consumer.OffsetAndMetadata(10)));

            // When kafka-consumer-groups lists and describes groups
            KafkaTool.Result list = KafkaTool.run(ConsumerGroupCommand::main, "--bootstrap-server",
                    PIER.bootstrapServers(), "--list");
            KafkaTool.Result describe = KafkaTool.run(ConsumerGroupCommand::main, "--bootstrap-server",
                    PIER.bootstrapServers(), "--describe", "--group", group);
            KafkaTool.Result members = KafkaTool.run(ConsumerGroupCommand::main, "--bootstrap-server",
                    PIER.bootstrapServers(), "--describe", "--group", group, "--members");

            // Then the group, its committed offset, the log end and the lag are shown
            assertThat(list.exitCode()).isZero();
            assertThat(list.out()).contains(group);
            assertThat(describe.exitCode()).isZero();
            assertThat(describe.out()).containsPattern(group + "\\s+" + topic + "\\s+0\\s+10\\s+12\\s+2");
            assertThat(members.exitCode()).isZero();
            assertThat(members.out()).contains(group).contains("consumer-" + group);
        }
    }
}
