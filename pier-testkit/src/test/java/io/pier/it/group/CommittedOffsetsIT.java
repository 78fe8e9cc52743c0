package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Committed offsets with the real clients: a consumer that uses {@code assign()} commits with
 * generation -1, Admin lists, alters and deletes a group's offsets, and a deleted topic's offsets
 * go with it.
 */
@Timeout(120)
class CommittedOffsetsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "2");

    static KafkaConsumer<String, String> consumer(String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("group.id", group);
        p.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
    }

    @Test
    void shouldReturnWhatAnAssignedConsumerCommittedWithItsMetadata() throws Exception {
        // Given a topic and a consumer that assigns itself both partitions
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("offsets-a", 2, (short) 1))).all().get();
        }
        TopicPartition p0 = new TopicPartition("offsets-a", 0);
        TopicPartition p1 = new TopicPartition("offsets-a", 1);
        try (KafkaConsumer<String, String> c = consumer("assign-group")) {
            c.assign(List.of(p0, p1));

            // When it commits offsets with metadata
            c.commitSync(Map.of(p0, new OffsetAndMetadata(7, "seven"), p1, new OffsetAndMetadata(3, null)));

            // Then it and Admin read them back; a partition never committed has none
            Map<TopicPartition, OffsetAndMetadata> committed = c.committed(Set.of(p0, p1));
            assertThat(committed.get(p0).offset()).isEqualTo(7);
            assertThat(committed.get(p0).metadata()).isEqualTo("seven");
            assertThat(committed.get(p1).offset()).isEqualTo(3);
            assertThat(committed.get(p1).metadata()).isEmpty();
        }
        try (KafkaConsumer<String, String> c = consumer("other-group")) {
            assertThat(c.committed(Set.of(p0)).get(p0)).isNull();
        }
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> listed =
                    admin.listConsumerGroupOffsets("assign-group").partitionsToOffsetAndMetadata().get();
            assertThat(listed).containsOnlyKeys(p0, p1);
            assertThat(listed.get(p0).metadata()).isEqualTo("seven");
        }
    }

    @Test
    void shouldAlterListAndDeleteOffsetsThroughAdminInOneBatch() throws Exception {
        try (Admin admin = admin()) {
            // Given two groups' offsets, set by Admin
            admin.createTopics(List.of(new NewTopic("offsets-b", 2, (short) 1))).all().get();
            TopicPartition p0 = new TopicPartition("offsets-b", 0);
            TopicPartition p1 = new TopicPartition("offsets-b", 1);
            admin.alterConsumerGroupOffsets("admin-1", Map.of(p0, new OffsetAndMetadata(11), p1,
                    new OffsetAndMetadata(12, "m"))).all().get();
            admin.alterConsumerGroupOffsets("admin-2", Map.of(p0, new OffsetAndMetadata(21))).all().get();

            // When both are listed in one request (OffsetFetch v8+ batches groups)
            var both = admin.listConsumerGroupOffsets(Map.of("admin-1", new ListConsumerGroupOffsetsSpec(),
                    "admin-2", new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(p0, p1))));

            // Then each group gets its own offsets
            assertThat(both.partitionsToOffsetAndMetadata("admin-1").get().get(p1).offset()).isEqualTo(12);
            Map<TopicPartition, OffsetAndMetadata> second = both.partitionsToOffsetAndMetadata("admin-2").get();
            assertThat(second.get(p0).offset()).isEqualTo(21);
            assertThat(second.get(p1)).isNull();

            // And a deleted offset is gone while the other stays
            admin.deleteConsumerGroupOffsets("admin-1", Set.of(p0)).all().get();
            assertThat(admin.listConsumerGroupOffsets("admin-1").partitionsToOffsetAndMetadata().get())
                    .containsOnlyKeys(p1);
            // a group with no offsets at all is not found
            assertThatThrownBy(() -> admin.deleteConsumerGroupOffsets("no-such-group", Set.of(p0)).all().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(GroupIdNotFoundException.class);
        }
    }

    @Test
    void shouldDropTheOffsetsOfADeletedTopic() throws Exception {
        try (Admin admin = admin()) {
            // Given offsets on a topic
            admin.createTopics(List.of(new NewTopic("offsets-doomed", 1, (short) 1))).all().get();
            TopicPartition tp = new TopicPartition("offsets-doomed", 0);
            admin.alterConsumerGroupOffsets("doomed-group", Map.of(tp, new OffsetAndMetadata(5))).all().get();

            // When the topic is deleted and re-created
            admin.deleteTopics(List.of("offsets-doomed")).all().get();
            await().atMost(Duration.ofSeconds(10)).until(() -> admin.listConsumerGroupOffsets("doomed-group")
                    .partitionsToOffsetAndMetadata().get().isEmpty());
            admin.createTopics(List.of(new NewTopic("offsets-doomed", 1, (short) 1))).all().get();

            // Then the new topic starts with no committed offset
            assertThat(admin.listConsumerGroupOffsets("doomed-group").partitionsToOffsetAndMetadata().get()
                    .get(tp)).isNull();
        }
    }
}
