package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every share-group admin API, driven through the stock {@link Admin} client. */
@Timeout(120)
class AdminShareGroupsIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());
    private final ShareFixture fixture = new ShareFixture(clients);

    @Test
    void shouldListAndDescribeAStableShareGroup() throws Exception {
        clients.createTopic("listed", 2);
        try (Admin admin = clients.admin();
                KafkaShareConsumer<String, String> consumer = clients.consumer("g-listed", "explicit")) {
            consumer.subscribe(Set.of("listed"));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                ShareGroupDescription d = describe(admin, "g-listed");
                assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(d.members()).hasSize(1);
                assertThat(d.members().iterator().next().assignment().topicPartitions())
                        .containsExactlyInAnyOrder(new TopicPartition("listed", 0), new TopicPartition("listed", 1));
            });

            ShareGroupDescription d = describe(admin, "g-listed");
            ShareMemberDescription member = d.members().iterator().next();
            assertThat(d.groupEpoch()).isPositive();
            assertThat(d.targetAssignmentEpoch()).isEqualTo(d.groupEpoch());
            assertThat(member.memberEpoch()).isEqualTo(d.groupEpoch());
            assertThat(member.clientId()).isNotEmpty();
            assertThat(member.host()).contains("127.0.0.1");

            List<GroupListing> listed = List.copyOf(
                    admin.listGroups(ListGroupsOptions.forShareGroups()).all().get());
            assertThat(listed).filteredOn(g -> g.groupId().equals("g-listed")).singleElement().satisfies(g -> {
                assertThat(g.groupId()).isEqualTo("g-listed");
                assertThat(g.type()).contains(GroupType.SHARE);
                assertThat(g.protocol()).isEqualTo("share");
                assertThat(g.groupState()).contains(GroupState.STABLE);
            });
            assertThat(admin.listGroups(ListGroupsOptions.forShareGroups().inGroupStates(Set.of(GroupState.EMPTY)))
                    .all().get()).extracting(GroupListing::groupId).doesNotContain("g-listed");
            assertThat(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get()).isEmpty();
        }
    }

    @Test
    void shouldReportGroupIdNotFoundForAnUnknownGroup() throws Exception {
        try (Admin admin = clients.admin()) {
            assertThatThrownBy(() -> describe(admin, "no-such-group"))
                    .hasCauseInstanceOf(GroupIdNotFoundException.class);
            assertThatThrownBy(() -> admin.deleteShareGroups(List.of("no-such-group")).all().get())
                    .hasCauseInstanceOf(GroupIdNotFoundException.class);
        }
    }

    @Test
    void shouldReportStartOffsetAndLagAfterAcceptingSomeRecords() throws Exception {
        clients.createTopic("lagging", 2);
        clients.setGroupConfig("g-lag", "share.auto.offset.reset", "earliest");
        clients.produce("lagging", 0, "v", 10);

        assertThat(fixture.acceptBelow("g-lag", "lagging", 4)).startsWith(0L, 1L, 2L, 3L);

        try (Admin admin = clients.admin()) {
            awaitEmpty(admin, "g-lag");
            Map<TopicPartition, SharePartitionOffsetInfo> all = offsets(admin, "g-lag", new ListShareGroupOffsetsSpec());
            assertThat(all).containsOnlyKeys(new TopicPartition("lagging", 0), new TopicPartition("lagging", 1));
            SharePartitionOffsetInfo p0 = all.get(new TopicPartition("lagging", 0));
            assertThat(p0.startOffset()).isEqualTo(4);
            assertThat(p0.lag()).contains(6L);
            assertThat(all.get(new TopicPartition("lagging", 1)).startOffset()).isZero();
            assertThat(all.get(new TopicPartition("lagging", 1)).lag()).contains(0L);

            Map<TopicPartition, SharePartitionOffsetInfo> named = offsets(admin, "g-lag",
                    new ListShareGroupOffsetsSpec().topicPartitions(List.of(new TopicPartition("lagging", 0))));
            assertThat(named.get(new TopicPartition("lagging", 0)).startOffset()).isEqualTo(4);
            Map<TopicPartition, SharePartitionOffsetInfo> never = offsets(admin, "g-never",
                    new ListShareGroupOffsetsSpec().topicPartitions(List.of(new TopicPartition("lagging", 0))));
            assertThat(never.get(new TopicPartition("lagging", 0))).isNull();
        }
    }

    @Test
    void shouldStartTheNextFetchAtTheAlteredOffset() throws Exception {
        clients.createTopic("altered", 1);
        clients.setGroupConfig("g-alter", "share.auto.offset.reset", "earliest");
        clients.produce("altered", 0, "a", 10);
        fixture.acceptBelow("g-alter", "altered", 2);
        TopicPartition tp = new TopicPartition("altered", 0);

        try (Admin admin = clients.admin()) {
            awaitEmpty(admin, "g-alter");
            admin.alterShareGroupOffsets("g-alter", Map.of(tp, 7L)).all().get();
            SharePartitionOffsetInfo info = offsets(admin, "g-alter", new ListShareGroupOffsetsSpec()).get(tp);
            assertThat(info.startOffset()).isEqualTo(7);
            assertThat(info.lag()).contains(3L);
        }
        assertThat(fixture.acceptBelow("g-alter", "altered", 10)).containsExactly(7L, 8L, 9L);
    }

    @Test
    void shouldRefuseOffsetChangesWhileTheGroupHasMembers() throws Exception {
        clients.createTopic("busy", 1);
        TopicPartition tp = new TopicPartition("busy", 0);
        try (Admin admin = clients.admin();
                KafkaShareConsumer<String, String> consumer = clients.consumer("g-busy", "explicit")) {
            consumer.subscribe(Set.of("busy"));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                consumer.poll(Duration.ofMillis(100));
                assertThat(describe(admin, "g-busy").groupState()).isEqualTo(GroupState.STABLE);
            });
            assertThatThrownBy(() -> admin.alterShareGroupOffsets("g-busy", Map.of(tp, 0L)).all().get())
                    .hasCauseInstanceOf(GroupNotEmptyException.class);
            assertThatThrownBy(() -> admin.deleteShareGroupOffsets("g-busy", Set.of("busy")).all().get())
                    .hasCauseInstanceOf(GroupNotEmptyException.class);
            assertThatThrownBy(() -> admin.deleteShareGroups(List.of("g-busy")).all().get())
                    .hasCauseInstanceOf(GroupNotEmptyException.class);
        }
    }

    @Test
    void shouldForgetDeletedOffsetsAndDeletedGroups() throws Exception {
        clients.createTopic("forget", 1);
        clients.setGroupConfig("g-forget", "share.auto.offset.reset", "earliest");
        clients.produce("forget", 0, "f", 5);
        fixture.acceptBelow("g-forget", "forget", 5);
        TopicPartition tp = new TopicPartition("forget", 0);

        try (Admin admin = clients.admin()) {
            awaitEmpty(admin, "g-forget");
            assertThat(offsets(admin, "g-forget", new ListShareGroupOffsetsSpec()).get(tp).startOffset())
                    .isEqualTo(5);
            admin.deleteShareGroupOffsets("g-forget", Set.of("forget")).all().get();
            assertThat(offsets(admin, "g-forget", new ListShareGroupOffsetsSpec())).isEmpty();
        }
        // With its state gone the group starts again from share.auto.offset.reset (earliest).
        assertThat(fixture.acceptBelow("g-forget", "forget", 5)).containsExactly(0L, 1L, 2L, 3L, 4L);

        try (Admin admin = clients.admin()) {
            awaitEmpty(admin, "g-forget");
            admin.deleteShareGroups(List.of("g-forget")).all().get();
            assertThatThrownBy(() -> describe(admin, "g-forget")).hasCauseInstanceOf(GroupIdNotFoundException.class);
            assertThat(admin.listGroups(ListGroupsOptions.forShareGroups()).all().get())
                    .extracting(GroupListing::groupId).doesNotContain("g-forget");
            assertThat(offsets(admin, "g-forget", new ListShareGroupOffsetsSpec())).isEmpty();
        }
    }

    private static ShareGroupDescription describe(Admin admin, String group)
            throws ExecutionException, InterruptedException {
        return admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
    }

    private static Map<TopicPartition, SharePartitionOffsetInfo> offsets(Admin admin, String group,
            ListShareGroupOffsetsSpec spec) throws ExecutionException, InterruptedException {
        return admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group).get();
    }

    private static void awaitEmpty(Admin admin, String group) {
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(describe(admin, group).groupState()).isEqualTo(GroupState.EMPTY));
    }
}
