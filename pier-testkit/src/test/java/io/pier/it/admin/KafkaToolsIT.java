package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.tools.ConfigCommand;
import org.apache.kafka.tools.FeatureCommand;
import org.apache.kafka.tools.ShareConsumerPerformance;
import org.apache.kafka.tools.TopicCommand;
import org.apache.kafka.tools.consumer.ConsoleShareConsumer;
import org.apache.kafka.tools.consumer.group.ShareGroupCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Kafka's own command-line tools (kafka-tools 4.4), run unchanged against Pier: the same main
 * classes kafka-topics.sh, kafka-configs.sh, kafka-console-share-consumer.sh and
 * kafka-share-groups.sh start. Assertions are on what they print.
 */
@Timeout(180)
class KafkaToolsIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldCreateListAndDescribeTopicsWithKafkaTopics() throws Exception {
        KafkaTool.Result created = topics("--create", "--topic", "tool-topic", "--partitions", "3",
                "--replication-factor", "1");
        assertThat(created.exitCode()).isZero();
        assertThat(created.out()).contains("Created topic tool-topic.");

        assertThat(topics("--list").out().lines()).contains("tool-topic");

        String described = topics("--describe", "--topic", "tool-topic").out();
        assertThat(described).contains("Topic: tool-topic").contains("PartitionCount: 3").contains("ReplicationFactor: 1");
        assertThat(described.lines().filter(l -> l.contains("Partition: "))).hasSize(3);
    }

    @Test
    void shouldDescribeTheTransactionVersionFeatureWithKafkaFeatures() throws Exception {
        // kafka-features describe prints what ApiVersions advertises, in Kafka 4.4's columns.
        KafkaTool.Result described = KafkaTool.run(FeatureCommand::main, "--bootstrap-server",
                PIER.bootstrapServers(), "describe");
        assertThat(described.exitCode()).as(described.out() + described.err()).isZero();
        assertThat(described.out().lines().filter(l -> l.startsWith("Feature: transaction.version")))
                .singleElement().satisfies(line -> assertThat(line.split("\\s+")).containsSequence(
                        "SupportedMinVersion:", "0", "SupportedMaxVersion:", "2", "FinalizedVersionLevel:", "2"));
    }

    @Test
    void shouldMeasureShareConsumptionWithKafkaSharePerfTest() throws Exception {
        // kafka-share-consumer-perf-test reads exactly the records it was asked for, then reports.
        clients.createTopic("perf-jobs", 1);
        clients.setGroupConfig("g-perf", "share.auto.offset.reset", "earliest");
        clients.produce("perf-jobs", 0, "p", 500);
        KafkaTool.Result perf = KafkaTool.run(ShareConsumerPerformance::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", "perf-jobs", "--group", "g-perf", "--messages", "500",
                "--timeout", "60000");
        assertThat(perf.exitCode()).as(perf.out() + perf.err()).isZero();
        assertThat(KafkaTool.perfReportValue(perf, "data.consumed.in.nMsg")).isEqualTo("500");
    }

    @Test
    void shouldDriveAShareGroupThroughItsLifeWithTheKafkaTools() throws Exception {
        String group = "g-tools";
        String topic = "tool-jobs";
        assertThat(topics("--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1").exitCode())
                .isZero();

        // kafka-configs: the group reads from the beginning.
        KafkaTool.Result altered = configs("--entity-type", "groups", "--entity-name", group, "--alter",
                "--add-config", "share.auto.offset.reset=earliest");
        assertThat(altered.out()).contains("Completed updating config for group " + group + ".");
        assertThat(configs("--entity-type", "groups", "--entity-name", group, "--describe").out())
                .contains("share.auto.offset.reset=earliest");

        // kafka-console-share-consumer: reads (and accepts) exactly what was produced.
        clients.produce(topic, 0, "job", 10);
        KafkaTool.Result consumed = KafkaTool.run(ConsoleShareConsumer::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", topic, "--group", group, "--max-messages", "10",
                "--timeout-ms", "60000");
        assertThat(consumed.out().lines().filter(l -> l.startsWith("job-")))
                .containsExactlyInAnyOrder("job-0", "job-1", "job-2", "job-3", "job-4", "job-5", "job-6", "job-7",
                        "job-8", "job-9");

        assertThat(shareGroups("--list").out().lines()).contains(group);
        // Without a name kafka-configs lists groups: ListConfigResources is not served, so it
        // falls back to ListGroups.
        assertThat(configs("--entity-type", "groups", "--describe").out())
                .contains("Dynamic configs for group " + group + " are:");
        awaitState(group, "Empty", 0);
        assertThat(offsetRow(group, topic, 0)).containsExactly("10", "0");
        assertThat(offsetRow(group, topic, 1)).containsExactly("0", "0");

        // --members while a consumer is in the group.
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                assertThat(stateRow(group)).containsExactly("Stable", "1");
            });
            String members = shareGroups("--describe", "--group", group, "--members").out();
            assertThat(row(members, group)).endsWith("2", topic + ":0,1");
            KafkaTool.Result refused = shareGroups("--reset-offsets", "--group", group, "--topic", topic,
                    "--to-earliest", "--execute");
            assertThat(refused.out() + refused.err()).contains("is not empty");
        }
        awaitState(group, "Empty", 0);

        // --reset-offsets: earliest for one topic, latest for all the group has, then by time.
        KafkaTool.Result earliest = shareGroups("--reset-offsets", "--group", group, "--topic", topic,
                "--to-earliest", "--execute");
        assertThat(row(earliest.out(), group, topic, "0")).endsWith("0");
        assertThat(offsetRow(group, topic, 0)).containsExactly("0", "10");

        shareGroups("--reset-offsets", "--group", group, "--all-topics", "--to-latest", "--execute");
        assertThat(offsetRow(group, topic, 0)).containsExactly("10", "0");

        shareGroups("--reset-offsets", "--group", group, "--topic", topic, "--to-datetime",
                "1970-01-01T00:00:00.000", "--execute");
        assertThat(offsetRow(group, topic, 0)).containsExactly("0", "10");

        // --delete-offsets, then --delete.
        KafkaTool.Result deletedOffsets = shareGroups("--delete-offsets", "--group", group, "--topic", topic);
        assertThat(row(deletedOffsets.out(), topic)).containsExactly(topic, "Successful");
        assertThat(shareGroups("--describe", "--group", group, "--offsets").out())
                .contains("Share group '" + group + "' has no offset information.");

        KafkaTool.Result deleted = shareGroups("--delete", "--group", group);
        assertThat(deleted.out()).contains("Deletion of requested share groups ('" + group + "') was successful.");
        assertThat(shareGroups("--list").out().lines()).doesNotContain(group);
    }

    private KafkaTool.Result topics(String... args) throws Exception {
        return KafkaTool.run(TopicCommand::main, withBootstrap(args));
    }

    private KafkaTool.Result configs(String... args) throws Exception {
        return KafkaTool.run(ConfigCommand::main, withBootstrap(args));
    }

    private KafkaTool.Result shareGroups(String... args) throws Exception {
        return KafkaTool.run(ShareGroupCommand::main, withBootstrap(args));
    }

    private String[] withBootstrap(String... args) {
        String[] all = Arrays.copyOf(args, args.length + 2);
        all[args.length] = "--bootstrap-server";
        all[args.length + 1] = PIER.bootstrapServers();
        return all;
    }

    /** START-OFFSET and LAG of one partition, from {@code --describe --offsets}. */
    private List<String> offsetRow(String group, String topic, int partition) throws Exception {
        String out = shareGroups("--describe", "--group", group, "--offsets").out();
        List<String> cells = row(out, group, topic, Integer.toString(partition));
        return cells.subList(3, 5);
    }

    /** STATE and #MEMBERS, from {@code --describe --state}. */
    private List<String> stateRow(String group) throws Exception {
        List<String> cells = row(shareGroups("--describe", "--group", group, "--state").out(), group);
        return cells.subList(cells.size() - 2, cells.size());
    }

    private void awaitState(String group, String state, int members) {
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(stateRow(group)).containsExactly(state, Integer.toString(members)));
    }

    /** The whitespace-separated cells of the one printed row that starts with {@code leading}. */
    private static List<String> row(String out, String... leading) {
        List<List<String>> rows = out.lines()
                .map(l -> List.of(l.trim().split("\\s+")))
                .filter(cells -> cells.size() >= leading.length
                        && cells.subList(0, leading.length).equals(List.of(leading)))
                .toList();
        assertThat(rows).as("one row starting with %s in:%n%s", List.of(leading), out).hasSize(1);
        return rows.get(0);
    }
}
