package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's kafka-consumer-groups (kafka-tools 4.4) against Pier: --reset-offsets in every mode,
 * --delete-offsets and --delete, on groups with no active members (the tool refuses active ones).
 */
@Timeout(120)
class ConsumerGroupResetToolsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    private static final TopicPartition P0 = new TopicPartition("reset-orders", 0);

    private static Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
    }

    /** A 1-partition topic of {@code records} records and a group that committed {@code offset}. */
    private static void givenGroupAt(String topic, String group, int records, long offset) throws Exception {
        try (Admin admin = admin()) {
            if (!admin.listTopics().names().get().contains(topic)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
                Properties pp = new Properties();
                pp.put("bootstrap.servers", PIER.bootstrapServers());
                try (KafkaProducer<String, String> producer =
                        new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
                    List<Future<RecordMetadata>> sent = new ArrayList<>();
                    for (int i = 0; i < records; i++) {
                        sent.add(producer.send(new ProducerRecord<>(topic, "v" + i)));
                    }
                    for (Future<RecordMetadata> f : sent) {
                        f.get();
                    }
                }
            }
            admin.alterConsumerGroupOffsets(group,
                    Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(offset))).all().get();
        }
    }

    private static Long committed(String group, TopicPartition tp) throws Exception {
        try (Admin admin = admin()) {
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp);
            return o == null ? null : o.offset();
        }
    }

    private static KafkaTool.Result tool(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", PIER.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaTool.run(ConsumerGroupCommand::main, all.toArray(String[]::new));
    }

    @Test
    void shouldShowButNotApplyAResetOnDryRun() throws Exception {
        // Given a group at offset 5 of 12
        givenGroupAt("reset-orders", "reset-dry", 12, 5);

        // When the tool plans a reset to the earliest offset without --execute
        KafkaTool.Result r = tool("--reset-offsets", "--group", "reset-dry", "--topic", "reset-orders",
                "--to-earliest", "--dry-run");

        // Then it prints the new offset and leaves the committed one alone
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).containsPattern("reset-dry\\s+reset-orders\\s+0\\s+0");
        assertThat(committed("reset-dry", P0)).isEqualTo(5L);
    }

    @Test
    void shouldResetToEarliestLatestOffsetAndShift() throws Exception {
        // Given a group at offset 5 of 12
        givenGroupAt("reset-orders", "reset-exec", 12, 5);

        // When each mode is executed in turn, then the committed offset follows it
        assertThat(tool("--reset-offsets", "--group", "reset-exec", "--topic", "reset-orders",
                "--to-earliest", "--execute").exitCode()).isZero();
        assertThat(committed("reset-exec", P0)).isEqualTo(0L);

        assertThat(tool("--reset-offsets", "--group", "reset-exec", "--topic", "reset-orders",
                "--to-latest", "--execute").out()).containsPattern("reset-exec\\s+reset-orders\\s+0\\s+12");
        assertThat(committed("reset-exec", P0)).isEqualTo(12L);

        assertThat(tool("--reset-offsets", "--group", "reset-exec", "--topic", "reset-orders",
                "--shift-by", "-4", "--execute").exitCode()).isZero();
        assertThat(committed("reset-exec", P0)).isEqualTo(8L);

        assertThat(tool("--reset-offsets", "--group", "reset-exec", "--topic", "reset-orders:0",
                "--to-offset", "3", "--execute").exitCode()).isZero();
        assertThat(committed("reset-exec", P0)).isEqualTo(3L);

        // A shift past either end is clamped to the log, as in Kafka
        assertThat(tool("--reset-offsets", "--group", "reset-exec", "--all-topics",
                "--shift-by", "100", "--execute").exitCode()).isZero();
        assertThat(committed("reset-exec", P0)).isEqualTo(12L);
    }

    @Test
    void shouldResetToADatetime() throws Exception {
        // Given a group at offset 5 of 12
        givenGroupAt("reset-orders", "reset-time", 12, 5);

        // When reset to a time before every record, then to one after every record
        assertThat(tool("--reset-offsets", "--group", "reset-time", "--topic", "reset-orders",
                "--to-datetime", "2000-01-01T00:00:00.000", "--execute").exitCode()).isZero();
        long before = committed("reset-time", P0);
        assertThat(tool("--reset-offsets", "--group", "reset-time", "--topic", "reset-orders",
                "--to-datetime", "2999-01-01T00:00:00.000", "--execute").exitCode()).isZero();
        long after = committed("reset-time", P0);

        // Then the first lands on the first record and the second on the log end
        assertThat(before).isZero();
        assertThat(after).isEqualTo(12L);
    }

    @Test
    void shouldDeleteOneTopicsOffsetsAndThenTheGroup() throws Exception {
        // Given a group with offsets on two topics
        givenGroupAt("reset-orders", "reset-del", 12, 5);
        givenGroupAt("reset-other", "reset-del", 3, 2);

        // When one topic's offsets are deleted
        KafkaTool.Result offsets = tool("--delete-offsets", "--group", "reset-del", "--topic", "reset-other");

        // Then only that topic's offset is gone
        assertThat(offsets.exitCode()).isZero();
        assertThat(offsets.out()).containsPattern("reset-other\\s+0\\s+Successful");
        assertThat(committed("reset-del", new TopicPartition("reset-other", 0))).isNull();
        assertThat(committed("reset-del", P0)).isEqualTo(5L);

        // When the group is deleted, then it is no longer listed
        KafkaTool.Result delete = tool("--delete", "--group", "reset-del");
        assertThat(delete.exitCode()).isZero();
        assertThat(delete.out()).contains("Deletion of requested consumer groups ('reset-del') was successful.");
        assertThat(tool("--list").out()).doesNotContain("reset-del");
    }

    @Test
    void shouldRefuseResetDeleteAndOffsetDeleteOfAnActiveGroup() throws Exception {
        // Given a group at offset 5 with a subscribed member
        givenGroupAt("reset-orders", "reset-live", 12, 5);
        Properties cp = new Properties();
        cp.put("bootstrap.servers", PIER.bootstrapServers());
        cp.put("group.id", "reset-live");
        cp.put("group.protocol", "classic");
        cp.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("reset-orders"));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(100));
                return !consumer.assignment().isEmpty();
            });

            // When the tool resets, deletes the group and deletes the subscribed topic's offsets
            KafkaTool.Result reset = tool("--reset-offsets", "--group", "reset-live", "--topic", "reset-orders",
                    "--to-earliest", "--execute");
            KafkaTool.Result delete = tool("--delete", "--group", "reset-live");
            KafkaTool.Result offsets = tool("--delete-offsets", "--group", "reset-live", "--topic", "reset-orders");

            // Then each is refused as Kafka refuses it, and the committed offset stays
            assertThat(reset.out() + reset.err())
                    .contains("Assignments can only be reset if the group 'reset-live' is inactive");
            assertThat(delete.out() + delete.err()).contains("GroupNotEmptyException");
            assertThat(offsets.out() + offsets.err()).contains("GroupSubscribedToTopicException");
            assertThat(committed("reset-live", P0)).isEqualTo(5L);
        }
    }

    @Test
    void shouldAnswerMissingGroupsTopicsAndOffsetsAsKafkaDoes() throws Exception {
        // Given a topic of 12 records and a group with an offset on it only
        givenGroupAt("reset-orders", "reset-edge", 12, 5);

        // When a group that does not exist yet is reset, it is created at the new offset
        KafkaTool.Result created = tool("--reset-offsets", "--group", "reset-new", "--topic", "reset-orders",
                "--to-earliest", "--execute");
        assertThat(created.out()).containsPattern("reset-new\\s+reset-orders\\s+0\\s+0");
        KafkaTool.Result described = tool("--describe", "--group", "reset-new");
        assertThat(described.err()).contains("Consumer group 'reset-new' has no active members.");
        assertThat(described.out()).containsPattern("reset-new\\s+reset-orders\\s+0\\s+0\\s+12\\s+12");

        // When offsets of a missing group are deleted, then the group is not found
        KafkaTool.Result missing = tool("--delete-offsets", "--group", "reset-missing", "--topic", "reset-orders");
        assertThat(missing.out()).contains("Error: The group id does not exist.")
                .containsPattern("reset-orders\\s+0\\s+Error: .*GroupIdNotFoundException");

        // When offsets of an unknown topic are deleted, then that topic is reported unknown
        KafkaTool.Result unknown = tool("--delete-offsets", "--group", "reset-edge", "--topic", "no-such-topic");
        assertThat(unknown.out()).containsPattern("no-such-topic\\s+-\\s+Error: .*UnknownTopicOrPartitionException");
        assertThat(committed("reset-edge", P0)).isEqualTo(5L);

        // When a group with no offset on the partition is shifted, then the tool refuses
        KafkaTool.Result shift = tool("--reset-offsets", "--group", "reset-none", "--topic", "reset-orders",
                "--shift-by", "1", "--execute");
        assertThat(shift.out() + shift.err())
                .contains("Cannot shift offset for partition reset-orders-0 since there is no current "
                        + "committed offset");
    }

    @Test
    void shouldExportByDurationDescribeStateAndKeepAGroupWhoseOffsetsWereDeleted() throws Exception {
        // Given a group at offset 5 of 12
        givenGroupAt("reset-orders", "reset-more", 12, 5);

        // When its current offsets are exported, then they are printed as CSV
        assertThat(tool("--reset-offsets", "--group", "reset-more", "--topic", "reset-orders", "--to-current",
                "--export", "--dry-run").out().lines()).contains("reset-orders,0,5");

        // When reset by a duration that reaches before every record, then it lands on the first
        assertThat(tool("--reset-offsets", "--group", "reset-more", "--all-topics", "--by-duration", "P365D",
                "--execute").exitCode()).isZero();
        assertThat(committed("reset-more", P0)).isZero();

        // When its state is described, then it is Empty with no members
        KafkaTool.Result state = tool("--describe", "--group", "reset-more", "--state");
        assertThat(state.out()).containsPattern("reset-more\\s+\\S+\\s+\\(\\d+\\)\\s+-\\s+Empty\\s+0");

        // When all its offsets are deleted, then, as in Kafka, it is still listed as Empty
        assertThat(tool("--delete-offsets", "--group", "reset-more", "--topic", "reset-orders").out())
                .containsPattern("reset-orders\\s+0\\s+Successful");
        assertThat(tool("--describe", "--group", "reset-more").err())
                .contains("Consumer group 'reset-more' has no active members.");
        assertThat(tool("--list", "--state").out()).containsPattern("reset-more\\s+Empty");
    }

    @Test
    void shouldResetAllGroupsAndFromAnExportedFile(@TempDir Path dir) throws Exception {
        // Given two groups on the topic
        givenGroupAt("reset-orders", "reset-all-a", 12, 2);
        givenGroupAt("reset-orders", "reset-all-b", 12, 4);

        // When both are reset with --all-groups, then each is at the log end
        assertThat(tool("--reset-offsets", "--all-groups", "--topic", "reset-orders", "--to-latest", "--execute")
                .exitCode()).isZero();
        assertThat(committed("reset-all-a", P0)).isEqualTo(12L);
        assertThat(committed("reset-all-b", P0)).isEqualTo(12L);

        // When one is reset from a file in the tool's export format, then it has the file's offset
        Path plan = dir.resolve("plan.csv");
        Files.writeString(plan, "reset-orders,0,7\n");
        assertThat(tool("--reset-offsets", "--group", "reset-all-a", "--from-file", plan.toString(), "--execute")
                .out()).containsPattern("reset-all-a\\s+reset-orders\\s+0\\s+7");
        assertThat(committed("reset-all-a", P0)).isEqualTo(7L);
    }

    @Test
    void shouldReportADeleteOfAMissingGroup() throws Exception {
        // When a group that never existed is deleted
        KafkaTool.Result r = tool("--delete", "--group", "never-was");

        // Then the tool says it does not exist, as it does against Kafka
        assertThat(r.out() + r.err()).contains("never-was").contains("does not exist");
    }
}
