package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A clean restart keeps every acknowledged record, the topic's identity and settings, and the offset sequence. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RestartIT {
    private static final String TOPIC = "restart";
    private static final int PARTITIONS = 3;
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    @Test
    void shouldKeepAcknowledgedRecordsTopicIdentityAndOffsetsAcrossRestart() throws Exception {
        // Given a 3-partition topic with non-default settings, and acknowledged records in every partition
        try (Admin admin = Admin.create(AckedRecords.producerProps(PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)
                    .configs(Map.of("retention.ms", "86400000", "max.message.bytes", "500000"))))
                    .all().get();
        }
        TopicSnapshot before = describe();
        assertThat(before.partitions()).isEqualTo(PARTITIONS);
        AckedRecords acked = new AckedRecords();
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(AckedRecords.producerProps(PIER.bootstrapServers()))) {
            send(producer, acked, "before-", 600);

            // When the broker restarts, and the same producer carries on
            PIER.restart();
            Map<Integer, Long> endBefore = endOffsets(acked.all());
            AckedRecords after = new AckedRecords();
            send(producer, after, "after-", 30);

            // Then the topic is the same topic with the same settings
            assertThat(describe()).isEqualTo(before);
            // ...produce continues at the next offsets, without reusing any
            for (int p = 0; p < PARTITIONS; p++) {
                int partition = p;
                List<Long> offsets = after.all().stream().filter(a -> a.partition() == partition)
                        .map(AckedRecords.Ack::offset).sorted().toList();
                List<Long> expected = new ArrayList<>();
                for (long o = endBefore.get(p); o < endBefore.get(p) + offsets.size(); o++) {
                    expected.add(o);
                }
                assertThat(offsets).as("offsets acknowledged after the restart, partition %d", p)
                        .isNotEmpty().isEqualTo(expected);
            }
            // ...and every acknowledged record, old and new, is at its acknowledged offset
            List<AckedRecords.Ack> all = new ArrayList<>(acked.all());
            all.addAll(after.all());
            Map<Integer, List<ConsumerRecord<String, String>>> log =
                    AckedRecords.readAll(PIER.bootstrapServers(), TOPIC, PARTITIONS, READ_TIMEOUT);
            assertThat(log.values().stream().mapToInt(List::size).sum()).isEqualTo(630);
            AckedRecords.assertLogMatches(all, log);
        }
    }

    private static void send(KafkaProducer<String, String> producer, AckedRecords acked, String prefix, int count)
            throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            futures.add(producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null, prefix + i)));
        }
        for (int i = 0; i < count; i++) {
            acked.add(prefix + i, futures.get(i).get(30, TimeUnit.SECONDS));
        }
    }

    private static Map<Integer, Long> endOffsets(List<AckedRecords.Ack> acks) {
        Map<Integer, Long> end = new HashMap<>();
        for (AckedRecords.Ack a : acks) {
            end.merge(a.partition(), a.offset() + 1, Math::max);
        }
        return end;
    }

    /** What must survive a restart: the topic id, the partition count and the topic's settings. */
    record TopicSnapshot(String topicId, int partitions, Map<String, String> configs) {}

    private static TopicSnapshot describe() throws Exception {
        try (Admin admin = Admin.create(AckedRecords.producerProps(PIER.bootstrapServers()))) {
            TopicDescription d = admin.describeTopics(Set.of(TOPIC)).allTopicNames().get().get(TOPIC);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
            Map<String, String> configs = new TreeMap<>();
            for (ConfigEntry e : admin.describeConfigs(Set.of(resource)).all().get().get(resource).entries()) {
                configs.put(e.name(), e.value() + " (" + e.source() + ")");
            }
            assertThat(configs).containsEntry("retention.ms", "86400000 (DYNAMIC_TOPIC_CONFIG)")
                    .containsEntry("max.message.bytes", "500000 (DYNAMIC_TOPIC_CONFIG)");
            return new TopicSnapshot(d.topicId().toString(), d.partitions().size(), configs);
        }
    }
}
