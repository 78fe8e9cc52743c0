package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The KIP-848 consumer protocol with the real KafkaConsumer ({@code group.protocol=consumer}):
 * Admin sees the group as a consumer group with the broker's assignment; an Empty group passes
 * between the classic and consumer protocols keeping its committed offsets; a broker-side regular-expression
 * subscription follows new topics; a static member restarted within its session gets its
 * partitions back.
 */
@Timeout(150)
class ConsumerProtocolIT {
    private static final Duration WAIT = Duration.ofSeconds(45);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0",
            "group.consumer.min.session.timeout.ms", "1000", "group.consumer.session.timeout.ms", "10000",
            "group.consumer.min.heartbeat.interval.ms", "100", "group.consumer.heartbeat.interval.ms", "200");

    private static Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
    }

    private static KafkaConsumer<String, String> consumer(String group, String protocol, String instanceId) {
        return GroupClients.consumer(PIER.bootstrapServers(), group, protocol, instanceId);
    }

    private static void createAndFill(String topic, int partitions, int records) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, topic + "-" + i)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
    }

    /** Polls until {@code count} records came (bounded by {@link #WAIT}); returns their values. */
    private static List<String> pollFor(KafkaConsumer<String, String> c, int count) {
        List<String> values = new ArrayList<>();
        await().atMost(WAIT).until(() -> {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                values.add(r.value());
            }
            return values.size() >= count;
        });
        return values;
    }

    @Test
    void shouldShowTheGroupAndTheBrokersAssignmentToAdmin() throws Exception {
        createAndFill("cp-admin", 3, 30);
        try (KafkaConsumer<String, String> c = consumer("cp-admin-group", "consumer", null); Admin admin = admin()) {
            c.subscribe(List.of("cp-admin"));
            assertThat(pollFor(c, 30)).hasSize(30);

            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("cp-admin-group"))
                    .describedGroups().get("cp-admin-group").get();
            assertThat(d.type()).isEqualTo(GroupType.CONSUMER);
            assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(d.partitionAssignor()).isEqualTo("uniform");
            assertThat(d.members()).singleElement().satisfies((MemberDescription m) -> assertThat(
                    m.assignment().topicPartitions()).containsExactlyInAnyOrder(new TopicPartition("cp-admin", 0),
                            new TopicPartition("cp-admin", 1), new TopicPartition("cp-admin", 2)));
            Set<String> consumerGroups = new HashSet<>();
            for (GroupListing g : admin.listGroups(new ListGroupsOptions().withTypes(Set.of(GroupType.CONSUMER)))
                    .all().get()) {
                if (g.type().orElse(null) == GroupType.CONSUMER) {
                    consumerGroups.add(g.groupId());
                }
            }
            assertThat(consumerGroups).contains("cp-admin-group");
        }
        try (Admin admin = admin()) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(admin.describeConsumerGroups(List.of("cp-admin-group"))
                    .describedGroups().get("cp-admin-group").get().groupState()).isEqualTo(GroupState.EMPTY));
        }
    }

    @Test
    void shouldKeepCommittedOffsetsWhenAnEmptyGroupChangesProtocol() throws Exception {
        createAndFill("cp-migrate", 2, 40);
        TopicPartition p0 = new TopicPartition("cp-migrate", 0);
        TopicPartition p1 = new TopicPartition("cp-migrate", 1);
        // A classic group reads everything and commits half of each partition
        try (KafkaConsumer<String, String> c = consumer("cp-migrate-group", "classic", null)) {
            c.subscribe(List.of("cp-migrate"));
            pollFor(c, 40);
            c.commitSync(Map.of(p0, new OffsetAndMetadata(10), p1, new OffsetAndMetadata(10)));
        }
        // The same group id with the consumer protocol resumes from those commits
        try (KafkaConsumer<String, String> c = consumer("cp-migrate-group", "consumer", null)) {
            c.subscribe(List.of("cp-migrate"));
            List<String> values = pollFor(c, 20);
            assertThat(values).hasSize(20).allSatisfy(v -> assertThat(Integer.parseInt(v.substring(11)))
                    .isGreaterThanOrEqualTo(20));
            c.commitSync(Map.of(p0, new OffsetAndMetadata(15), p1, new OffsetAndMetadata(15)));
        }
        // And back to classic: the consumer protocol's commits are there
        try (KafkaConsumer<String, String> c = consumer("cp-migrate-group", "classic", null)) {
            c.subscribe(List.of("cp-migrate"));
            assertThat(pollFor(c, 10)).hasSize(10);
        }
    }

    @Test
    void shouldFollowAPatternSubscriptionToANewTopic() throws Exception {
        createAndFill("cp-regex-a", 1, 5);
        try (KafkaConsumer<String, String> c = consumer("cp-regex-group", "consumer", null)) {
            // A SubscriptionPattern is resolved by the broker (KIP-848), a java.util.regex.Pattern by the client.
            c.subscribe(new SubscriptionPattern("cp-regex-.*"));
            assertThat(pollFor(c, 5)).allSatisfy(v -> assertThat(v).startsWith("cp-regex-a-"));

            createAndFill("cp-regex-b", 1, 5);
            assertThat(pollFor(c, 5)).allSatisfy(v -> assertThat(v).startsWith("cp-regex-b-"));
            assertThat(c.assignment()).containsExactlyInAnyOrder(new TopicPartition("cp-regex-a", 0),
                    new TopicPartition("cp-regex-b", 0));
        }
    }

    @Test
    void shouldGiveARestartedStaticMemberItsPartitionsBack() throws Exception {
        createAndFill("cp-static", 4, 8);
        Set<TopicPartition> first;
        try (KafkaConsumer<String, String> a = consumer("cp-static-group", "consumer", "instance-a");
                KafkaConsumer<String, String> b = consumer("cp-static-group", "consumer", "instance-b")) {
            a.subscribe(List.of("cp-static"));
            b.subscribe(List.of("cp-static"));
            await().atMost(WAIT).until(() -> {
                a.poll(Duration.ofMillis(50));
                b.poll(Duration.ofMillis(50));
                return a.assignment().size() == 2 && b.assignment().size() == 2;
            });
            first = Set.copyOf(b.assignment());
            int epoch = groupEpoch();

            // b restarts within its session timeout: a static member leaves with epoch -2
            b.close();
            try (KafkaConsumer<String, String> b2 = consumer("cp-static-group", "consumer", "instance-b")) {
                b2.subscribe(List.of("cp-static"));
                await().atMost(WAIT).until(() -> {
                    a.poll(Duration.ofMillis(50));
                    b2.poll(Duration.ofMillis(50));
                    return b2.assignment().size() == 2;
                });
                assertThat(b2.assignment()).isEqualTo(first);
                assertThat(a.assignment()).doesNotContainAnyElementsOf(first).hasSize(2);
                assertThat(groupEpoch()).as("no rebalance").isEqualTo(epoch);
            }
        }
    }

    private static int groupEpoch() throws Exception {
        try (Admin admin = admin()) {
            return admin.describeConsumerGroups(List.of("cp-static-group")).describedGroups().get("cp-static-group")
                    .get().groupEpoch().orElseThrow();
        }
    }
}
