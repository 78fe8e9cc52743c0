package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.common.ManualClock;
import io.pier.server.Pier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code offsets.retention.minutes} with the real clients, on a broker whose clock is a manual one
 * (the smallest retention Kafka allows is a minute): a consumer group that was left Empty loses its
 * offsets and then disappears from ListGroups once retention has passed, not before, and stays
 * gone after a restart, while a group committed to recently comes back with its offsets; the same
 * for a consumer-protocol group, whose offsets age from their commits.
 */
@Timeout(120)
class OffsetRetentionIT {
    private static final long MINUTE = 60_000;
    private static final Map<String, String> CONFIG = Map.of(
            "offsets.retention.minutes", "60",
            "offsets.retention.check.interval.ms", String.valueOf(MINUTE),
            "group.initial.rebalance.delay.ms", "0",
            // One shard runs every group's check, so one expired group shows that a check has run.
            "pier.shards", "1");
    private static final TopicPartition P0 = new TopicPartition("retained", 0);
    private static final TopicPartition P1 = new TopicPartition("retained", 1);

    @TempDir
    Path dataDir;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private Pier pier;

    private Pier start() throws Exception {
        pier = Pier.builder().clock(clock).dataDir(dataDir).configs(CONFIG).start();
        return pier;
    }

    @AfterEach
    void stop() {
        if (pier != null) {
            pier.close();
        }
    }

    private Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()));
    }

    private static Set<String> groups(Admin admin) throws Exception {
        return admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get().stream()
                .map(GroupListing::groupId).collect(Collectors.toSet());
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    }

    /** A consumer of {@code protocol} that joins the group, commits and leaves (the group is then Empty). */
    private void consumeCommitAndLeave(String group, String protocol) {
        // fetch.max.wait.ms 0: a fetch parked on the broker waits for MaxWaitMs of the manual clock,
        // which stands still, and close() would wait for it until its own timeout.
        Map<String, Object> config = Map.of("bootstrap.servers", pier.bootstrapServers(), "group.id", group,
                "group.protocol", protocol, "enable.auto.commit", "false", "fetch.max.wait.ms", "0");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer())) {
            c.subscribe(List.of("retained"));
            for (int i = 0; i < 100 && c.assignment().isEmpty(); i++) {
                c.poll(Duration.ofMillis(100));
            }
            assertThat(c.assignment()).containsExactlyInAnyOrder(P0, P1);
            c.commitSync(Map.of(P0, new OffsetAndMetadata(3), P1, new OffsetAndMetadata(4)));
        }
    }

    /**
     * Topic "retained"; a standalone group "witness" that commits now (its offset is the first to
     * expire, which shows that a check ran); two minutes later {@code group}'s member of
     * {@code protocol} commits and leaves.
     */
    private void witnessThenEmptyGroup(Admin admin, String group, String protocol) throws Exception {
        admin.createTopics(List.of(new NewTopic("retained", 2, (short) 1))).all().get();
        admin.alterConsumerGroupOffsets("witness", Map.of(P0, new OffsetAndMetadata(1))).all().get();
        clock.advance(2 * MINUTE);
        consumeCommitAndLeave(group, protocol);
    }

    @Test
    void shouldExpireAnEmptyGroupsOffsetsAndTheGroupAfterRetentionAndKeepThemDeletedAcrossARestart()
            throws Exception {
        start();
        try (Admin admin = admin()) {
            // Given a standalone group's offset, and two minutes later a consumer group whose member
            // committed and left
            witnessThenEmptyGroup(admin, "left-empty", "classic");
            assertThat(groups(admin)).contains("witness", "left-empty");
            assertThat(offsets(admin, "left-empty")).containsOnlyKeys(P0, P1);

            // When 61 minutes have passed since the witness committed, 59 since the group became Empty
            clock.advance(59 * MINUTE);

            // Then a check has run (the witness went, and its group with it), but the Empty group keeps its offsets
            await().atMost(Duration.ofSeconds(30)).until(() -> !groups(admin).contains("witness"));
            assertThat(offsets(admin, "witness")).isEmpty();
            assertThat(offsets(admin, "left-empty")).containsOnlyKeys(P0, P1);
            assertThat(groups(admin)).contains("left-empty");

            // When retention has passed since it became Empty
            clock.advance(2 * MINUTE);

            // Then its offsets are gone and ListGroups no longer shows it
            await().atMost(Duration.ofSeconds(30)).until(() -> !groups(admin).contains("left-empty"));
            assertThat(offsets(admin, "left-empty")).isEmpty();

            // And a group committed to just now is untouched
            admin.alterConsumerGroupOffsets("fresh", Map.of(P1, new OffsetAndMetadata(9))).all().get();
        }
        pier.close();

        // When the broker restarts on the same data
        start();
        try (Admin admin = admin()) {
            // Then the expired groups stay gone, and the fresh one is back with its offset
            assertThat(groups(admin)).contains("fresh").doesNotContain("witness", "left-empty");
            assertThat(offsets(admin, "left-empty")).isEmpty();
            assertThat(offsets(admin, "fresh").get(P1).offset()).isEqualTo(9);
        }
    }

    @Test
    void shouldExpireAConsumerProtocolGroupsOffsetsAndTheGroupOnceRetentionPassedSinceTheCommit() throws Exception {
        start();
        try (Admin admin = admin()) {
            // Given a standalone group's offset, and two minutes later a consumer-protocol (KIP-848)
            // group whose member committed and left
            witnessThenEmptyGroup(admin, "kip-848", "consumer");
            assertThat(offsets(admin, "kip-848")).containsOnlyKeys(P0, P1);
            assertThat(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get())
                    .filteredOn(l -> l.groupId().equals("kip-848"))
                    .singleElement().satisfies(l -> assertThat(l.type()).contains(GroupType.CONSUMER));

            // When 59 minutes have passed since the commit, a check has run (the witness went) and kept it
            clock.advance(59 * MINUTE);
            await().atMost(Duration.ofSeconds(30)).until(() -> !groups(admin).contains("witness"));
            assertThat(offsets(admin, "kip-848")).containsOnlyKeys(P0, P1);
            assertThat(groups(admin)).contains("kip-848");

            // Then once retention has passed, the offsets go, and the group with them
            clock.advance(2 * MINUTE);
            await().atMost(Duration.ofSeconds(30)).until(() -> !groups(admin).contains("kip-848"));
            assertThat(offsets(admin, "kip-848")).isEmpty();
        }
    }
}
