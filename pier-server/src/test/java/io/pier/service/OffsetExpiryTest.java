package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.ClassicGroupListing;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicProtocol;
import io.pier.group.ClassicSync;
import io.pier.group.consumer.ConsumerGroupListing;
import io.pier.group.consumer.ConsumerHeartbeat;
import io.pier.group.consumer.ConsumerHeartbeatResult;
import io.pier.state.CommittedOffset;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code offsets.retention.minutes} on hand-driven shards and a manual clock: the shards' offset
 * expiry step deletes the offsets of Empty groups once retention has passed, and the groups with
 * them, durably; a group with members keeps the offsets of what it subscribes to.
 */
class OffsetExpiryTest {
    private static final int SHARDS = 3;
    private static final long MINUTE = 60_000;
    private static final long RETENTION = 60 * MINUTE;
    private static final long CHECK = MINUTE;
    /** The longest session Kafka allows by default, so members need no heartbeat for a while. */
    private static final int SESSION_MS = 1_800_000;
    private static final Map<String, String> SETTINGS = Map.of("offsets.retention.minutes", "60",
            "offsets.retention.check.interval.ms", String.valueOf(CHECK), "group.initial.rebalance.delay.ms", "0");
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final TopicPartition U0 = new TopicPartition("u", 0);

    @TempDir
    Path dir;

    private HandDrivenServices broker;

    private HandDrivenServices open() throws Exception {
        broker = new HandDrivenServices(dir, SHARDS, null, SETTINGS);
        return broker;
    }

    private ConsumerGroups groups() {
        return broker.services.consumerGroups();
    }

    private void topics() throws Exception {
        broker.agents.await(broker.services.topics().create("t", 2, Map.of(), false));
        broker.agents.await(broker.services.topics().create("u", 1, Map.of(), false));
    }

    private static byte[] subscription(String... topics) {
        return Utils.toArray(ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of(topics))));
    }

    private static ClassicJoin join(String groupId, String memberId, String... topics) {
        return new ClassicJoin(groupId, memberId, null, "client", "/127.0.0.1", SESSION_MS, 30_000, "consumer",
                List.of(new ClassicProtocol("range", subscription(topics))), true, true);
    }

    /** A classic member of {@code groupId} subscribed to {@code topics}, joined and synced (Stable, generation 1). */
    private String stableMember(String groupId, String... topics) throws Exception {
        ClassicJoinResult first = broker.agents.await(groups().join(join(groupId, "", topics)));
        assertThat(first.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        String id = first.memberId();
        CompletableFuture<ClassicJoinResult> joined = groups().join(join(groupId, id, topics));
        assertThat(broker.agents.await(joined).generationId()).isEqualTo(1);
        broker.agents.await(groups().sync(new ClassicSync(groupId, 1, id, null, "consumer", "range",
                Map.of(id, new byte[0]))));
        return id;
    }

    private void commit(String groupId, int generation, String memberId, Map<TopicPartition, Long> offsets)
            throws Exception {
        Map<TopicPartition, ConsumerGroups.Offset> request = new HashMap<>();
        offsets.forEach((tp, o) -> request.put(tp, new ConsumerGroups.Offset(o, -1, null)));
        Map<TopicPartition, Errors> result = broker.agents.await(groups().commit(
                new ConsumerGroups.CommitRequest(groupId, generation, memberId, null, (short) 9, request)));
        assertThat(result).allSatisfy((tp, e) -> assertThat(e).isEqualTo(Errors.NONE));
    }

    private Map<TopicPartition, CommittedOffset> committed(String groupId) throws Exception {
        return broker.agents.await(groups().fetch(groupId, null)).offsets();
    }

    private Set<String> listed() throws Exception {
        ConsumerGroups.Listings l = broker.agents.await(groups().list());
        Set<String> ids = new HashSet<>();
        l.classic().stream().map(ClassicGroupListing::groupId).forEach(ids::add);
        l.consumer().stream().map(ConsumerGroupListing::groupId).forEach(ids::add);
        return ids;
    }

    @Test
    void shouldExpireAnEmptyGroupsOffsetsAfterRetentionThenTheGroupDurably() throws Exception {
        try (HandDrivenServices b = open()) {
            // Given a member that committed T0, then left ten minutes later: the group is Empty from then
            topics();
            String member = stableMember("g", "t");
            commit("g", 1, member, Map.of(T0, 5L));
            b.agents.advance(10 * MINUTE);
            ClassicLeave.Result left = b.agents.await(groups().leave("g", List.of(new ClassicLeave.Member(member,
                    null))));
            assertThat(left.error()).isEqualTo(Errors.NONE);
            // And half an hour later Admin commits T1 to the Empty group (generation -1)
            b.agents.advance(30 * MINUTE);
            commit("g", -1, "", Map.of(T1, 7L));

            // When the group has been Empty for a millisecond less than retention (T0's commit is older)
            b.agents.advance(RETENTION - 30 * MINUTE - 1);

            // Then everything is still there
            assertThat(committed("g")).containsOnlyKeys(T0, T1);
            assertThat(listed()).contains("g");

            // When retention has passed since the group became Empty (and the next check ran)
            b.agents.advance(CHECK + 1);

            // Then T0 is gone, while T1 ages from its own, later commit
            assertThat(committed("g")).containsOnlyKeys(T1);
            assertThat(listed()).contains("g");

            // When retention has passed since T1's commit too
            b.agents.advance(30 * MINUTE);

            // Then the last offset went, and the group with it
            assertThat(committed("g")).isEmpty();
            assertThat(listed()).doesNotContain("g");
        }
        // And after a restart the deletion holds: no offsets, no group brought back
        try (HandDrivenServices b = open()) {
            assertThat(committed("g")).isEmpty();
            assertThat(listed()).doesNotContain("g");
        }
    }

    @Test
    void shouldKeepAGroupWithMembersAndTheOffsetsOfWhatItSubscribesTo() throws Exception {
        try (HandDrivenServices b = open()) {
            // Given a Stable classic group subscribed to t that committed offsets of t and of u
            topics();
            String member = stableMember("g", "t");
            commit("g", 1, member, Map.of(T0, 5L, U0, 6L));

            // When more than retention passes while the member stays (heartbeats inside its session)
            for (int i = 0; i < 4; i++) {
                b.agents.advance(20 * MINUTE);
                assertThat(b.agents.await(groups().heartbeat("g", member, null, 1))).isEqualTo(Errors.NONE);
            }

            // Then the group keeps the offsets of t; those of u, which no member subscribes to,
            // aged from their commit and went, as Kafka expires them
            assertThat(committed("g")).containsOnlyKeys(T0);
            assertThat(listed()).contains("g");
        }
    }

    @Test
    void shouldRestartAnOffsetsClockWithEachCommitOfAGroupWithoutMembers() throws Exception {
        try (HandDrivenServices b = open()) {
            // Given a simple group (commits only, never a member) that committed T0 and T1
            topics();
            commit("simple", -1, "", Map.of(T0, 1L, T1, 1L));

            // When T1 is committed again 40 minutes later
            b.agents.advance(40 * MINUTE);
            commit("simple", -1, "", Map.of(T1, 2L));

            // Then T0 goes an hour after its commit, T1 an hour after its second commit
            b.agents.advance(RETENTION - 40 * MINUTE - 1);
            assertThat(committed("simple")).containsOnlyKeys(T0, T1);
            b.agents.advance(CHECK + 1);
            assertThat(committed("simple")).containsOnlyKeys(T1);
            assertThat(committed("simple").get(T1).offset()).isEqualTo(2);
            assertThat(listed()).contains("simple");
            b.agents.advance(40 * MINUTE);
            assertThat(committed("simple")).isEmpty();
            assertThat(listed()).doesNotContain("simple");
        }
    }

    @Test
    void shouldDeleteAnEmptyGroupWithoutOffsetsAtTheNextCheck() throws Exception {
        try (HandDrivenServices b = open()) {
            // Given a member that joined and left without committing
            String member = stableMember("g", "t");
            b.agents.await(groups().leave("g", List.of(new ClassicLeave.Member(member, null))));
            assertThat(listed()).contains("g");

            // When the next check runs, the Empty group goes, as Kafka deletes it
            b.agents.advance(CHECK);
            assertThat(listed()).doesNotContain("g");
        }
    }

    private ConsumerHeartbeatResult consumerHeartbeat(String memberId, int epoch, List<String> topics)
            throws Exception {
        ConsumerHeartbeatResult r = broker.agents.await(groups().consumerHeartbeat(new ConsumerHeartbeat("c",
                memberId, epoch, null, null, epoch == 0 ? 30_000 : -1, topics, null, null,
                epoch == 0 ? Set.of() : null, "client", "/127.0.0.1")));
        assertThat(r.error()).as(r.errorMessage()).isEqualTo(Errors.NONE);
        return r;
    }

    @Test
    void shouldAgeAConsumerProtocolGroupsOffsetsFromTheirCommitsAsKafkaDoes() throws Exception {
        try (HandDrivenServices b = open()) {
            // Given a consumer-protocol member subscribed to t that committed offsets of t and u
            topics();
            ConsumerHeartbeatResult joined = consumerHeartbeat("m-1", 0, List.of("t"));
            commit("c", joined.memberEpoch(), "m-1", Map.of(T0, 5L, U0, 6L));

            // When more than retention passes with the member heartbeating inside its 45 s session
            int epoch = joined.memberEpoch();
            for (long t = 0; t <= RETENTION; t += 40_000) {
                b.agents.advance(40_000);
                epoch = consumerHeartbeat("m-1", epoch, null).memberEpoch();
            }

            // Then only the offsets of the subscribed topic are left
            assertThat(committed("c")).containsOnlyKeys(T0);
            assertThat(listed()).contains("c");

            // When the member leaves, the group is Empty and T0's commit is past retention: it goes
            // at the next check, and the group with it
            consumerHeartbeat("m-1", ConsumerHeartbeat.LEAVE_EPOCH, null);
            assertThat(listed()).contains("c");
            b.agents.advance(CHECK);
            assertThat(committed("c")).isEmpty();
            assertThat(listed()).doesNotContain("c");
        }
    }
}
