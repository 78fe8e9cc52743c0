package io.pier.it.admin;

import static io.pier.it.PierCli.columns;
import static io.pier.it.PierCli.pier;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.PierCli.Run;
import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pier group} against an in-process Pier, with real stock clients making the groups: a
 * classic consumer group of two members that committed known offsets, and a share group.
 */
@Timeout(120)
class PierGroupCommandIT {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 4;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0",
            "group.consumer.min.heartbeat.interval.ms", "100", "group.consumer.heartbeat.interval.ms", "200");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    /**
     * Given partition p of "orders" holding 10 + p records and a two-member classic group in which
     * each member committed offset 2p + 1 for the partitions it owns, the lag of p is 9 - p.
     */
    @ParameterizedTest
    @ValueSource(strings = {"classic", "consumer"})
    void shouldShowAConsumerGroupsMembersPartitionsCommittedOffsetsAndLag(String protocol) throws Exception {
        String topic = TOPIC + "-" + protocol;
        String group = "g-orders-" + protocol;
        clients.createTopic(topic, PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            clients.produce(topic, p, "v", 10 + p);
        }
        try (KafkaConsumer<String, String> a = consumer(group, "reader-a", protocol);
                KafkaConsumer<String, String> b = consumer(group, "reader-b", protocol)) {
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            // One thread polls both, so each gets to rejoin when the other's arrival starts a rebalance.
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!(a.assignment().size() == 2 && b.assignment().size() == 2) && System.nanoTime() < deadline) {
                a.poll(Duration.ofMillis(100));
                b.poll(Duration.ofMillis(100));
            }
            assertThat(a.assignment()).hasSize(2);
            assertThat(b.assignment()).hasSize(2);
            Map<TopicPartition, String> owner = new HashMap<>();
            for (KafkaConsumer<String, String> c : List.of(a, b)) {
                Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
                for (TopicPartition tp : c.assignment()) {
                    commit.put(tp, new OffsetAndMetadata(2L * tp.partition() + 1));
                    owner.put(tp, c.groupMetadata().memberId());
                }
                c.commitSync(commit);
            }

            Run list = pier("group", "--bootstrap-server", PIER.bootstrapServers());
            Run describe = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--group", group);

            assertThat(list.code()).as(list.err()).isZero();
            assertThat(list.out()).startsWith("GROUP");
            assertThat(columns(list.out(), group + " ")).as(list.out())
                    .containsExactly(group, protocol, "Stable", "2");
            assertThat(describe.code()).as(describe.err()).isZero();
            assertThat(describe.out()).as(describe.out())
                    .startsWith("Consumer group " + group + ": state Stable, protocol " + protocol + ", assignor "
                            + (protocol.equals("classic") ? "range" : "uniform") + ", 2 member(s)");
            for (KafkaConsumer<String, String> c : List.of(a, b)) {
                String member = c.groupMetadata().memberId();
                assertThat(columns(describe.out(), member)).as(describe.out())
                        .containsExactly(member, c == a ? "reader-a" : "reader-b",
                                "/127.0.0.1", partitionList(c.assignment()));
            }
            for (int p = 0; p < PARTITIONS; p++) {
                // TOPIC PARTITION COMMITTED-OFFSET LOG-END-OFFSET LAG MEMBER
                assertThat(partitionRow(describe.out(), topic, p)).as(describe.out()).containsExactly(topic,
                        String.valueOf(p), String.valueOf(2 * p + 1), String.valueOf(10 + p), String.valueOf(9 - p),
                        owner.get(new TopicPartition(topic, p)));
            }
        }

        // Once both members left, the group is Empty and its committed offsets and lag remain.
        Run empty = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--group", group);

        assertThat(empty.code()).as(empty.err()).isZero();
        assertThat(empty.out()).as(empty.out()).startsWith("Consumer group " + group + ": state Empty")
                .contains("0 member(s)");
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(partitionRow(empty.out(), topic, p)).as(empty.out()).containsExactly(topic, String.valueOf(p),
                    String.valueOf(2 * p + 1), String.valueOf(10 + p), String.valueOf(9 - p), "-");
        }
    }

    @Test
    void shouldListAShareGroupAndShowItAsPierShareGroupDoes() throws Exception {
        clients.createTopic("jobs", 1);
        clients.setGroupConfig("g-jobs", "share.auto.offset.reset", "earliest");
        clients.produce("jobs", 0, "j", 3);
        try (KafkaShareConsumer<String, String> consumer = clients.consumer("g-jobs", "implicit")) {
            consumer.subscribe(Set.of("jobs"));
            int got = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (got < 3 && System.nanoTime() < deadline) {
                got += consumer.poll(Duration.ofMillis(200)).count();
            }
            assertThat(got).isEqualTo(3);
            consumer.commitSync();

            Run list = pier("group", "--bootstrap-server", PIER.bootstrapServers());
            Run describe = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--group", "g-jobs",
                    "--no-metrics");

            assertThat(list.code()).as(list.err()).isZero();
            assertThat(columns(list.out(), "g-jobs ")).as(list.out()).containsExactly("g-jobs", "share", "Stable", "1");
            assertThat(describe.code()).as(describe.err()).isZero();
            // What pier share-group prints, the --no-metrics passed on to it.
            assertThat(describe.out()).as(describe.out())
                    .startsWith("Share group g-jobs: state Stable").contains("1 member(s)", "not read (--no-metrics)");
            // TOPIC PARTITION START-OFFSET END-OFFSET LOG-END-OFFSET LAG ...
            assertThat(columns(describe.out(), "jobs ")).as(describe.out()).startsWith("jobs", "0", "3", "-", "3", "0");
        }
    }

    @Test
    void shouldSayWhichGroupIsMissingWithExitCode1() {
        Run run = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--group", "no-such-group");

        assertThat(run.code()).isEqualTo(1);
        assertThat(run.err()).contains("group no-such-group does not exist on " + PIER.bootstrapServers());
        assertThat(run.out()).isEmpty();
    }

    @Test
    void shouldNameTheFlagOfABadArgumentWithUsageAndExitCode2() {
        Run unknown = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--grop", "g-orders");
        Run noBootstrap = pier("group", "--group", "g-orders");
        Run noValue = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--group");
        Run metricsWithoutGroup = pier("group", "--bootstrap-server", PIER.bootstrapServers(), "--no-metrics");
        Run help = pier("--help");

        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("pier: unknown option --grop", "usage: pier group");
        assertThat(noBootstrap.code()).isEqualTo(2);
        assertThat(noBootstrap.err()).contains("pier: --bootstrap-server is required", "usage: pier group");
        assertThat(noValue.code()).isEqualTo(2);
        assertThat(noValue.err()).contains("pier: --group needs a value");
        assertThat(metricsWithoutGroup.code()).isEqualTo(2);
        assertThat(metricsWithoutGroup.err()).contains("pier: --no-metrics needs --group");
        assertThat(help.out()).contains("usage: pier group --bootstrap-server HOST:PORT [--group GROUP");
    }

    private static KafkaConsumer<String, String> consumer(String group, String clientId, String protocol) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("group.protocol", protocol);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** "orders-0,orders-1": a member's partitions as the command lists them. */
    private static String partitionList(Set<TopicPartition> assigned) {
        return assigned.stream().sorted(Comparator.comparingInt(TopicPartition::partition))
                .map(TopicPartition::toString).collect(Collectors.joining(","));
    }

    /** The columns of the partition table's row for partition {@code p} of the topic. */
    private static List<String> partitionRow(String output, String topic, int p) {
        return output.lines().map(l -> List.of(l.trim().split("\\s+")))
                .filter(c -> c.size() > 1 && c.get(0).equals(topic) && c.get(1).equals(String.valueOf(p)))
                .findFirst().orElse(List.of());
    }
}
