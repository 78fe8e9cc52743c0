package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.state.CommittedOffset;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * Kafka's offset expiry rules on plain values, and what the classic coordinator tells them: when
 * a group became Empty, and which topics a group with members keeps.
 */
class OffsetExpirationTest {
    private static final long HOUR = 3_600_000;
    private static final OffsetExpiration.Config ONE_HOUR = new OffsetExpiration.Config(HOUR, 60_000);
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition U0 = new TopicPartition("u", 0);
    /** Wall and monotonic clocks apart by an arbitrary amount, as on a real machine. */
    private static final long WALL = 1_700_000_000_000L;

    private static CommittedOffset committedAt(long wallMs) {
        return new CommittedOffset(new Uuid(1, 2), 5, -1, null, wallMs);
    }

    private static Map<TopicPartition, CommittedOffset> expired(Map<TopicPartition, CommittedOffset> offsets,
            long emptySinceMs, Set<String> keptTopics, long nowMonoMs) {
        return OffsetExpiration.expired(offsets, emptySinceMs, keptTopics::contains, ONE_HOUR, WALL + nowMonoMs,
                nowMonoMs);
    }

    @Test
    void shouldExpireAnEmptyGroupsOffsetsOnceRetentionPassedSinceItBecameEmptyAndSinceEachCommit() {
        // Given a group Empty since 10 h (monotonic), one offset committed before that, one after
        Map<TopicPartition, CommittedOffset> offsets = Map.of(T0, committedAt(WALL + 9 * HOUR),
                U0, committedAt(WALL + 10 * HOUR + 30 * 60_000));
        long emptySince = 10 * HOUR;

        // Then nothing goes a millisecond before an hour of emptiness, T0 at the hour, U0 an hour after its commit
        assertThat(expired(offsets, emptySince, Set.of(), 11 * HOUR - 1)).isEmpty();
        assertThat(expired(offsets, emptySince, Set.of(), 11 * HOUR)).containsOnlyKeys(T0);
        assertThat(expired(offsets, emptySince, Set.of(), 11 * HOUR + 30 * 60_000 - 1)).containsOnlyKeys(T0);
        assertThat(expired(offsets, emptySince, Set.of(), 11 * HOUR + 30 * 60_000)).containsOnlyKeys(T0, U0);
    }

    @Test
    void shouldAgeASimpleGroupsOffsetsFromTheirCommitsAlone() {
        Map<TopicPartition, CommittedOffset> offsets = Map.of(T0, committedAt(WALL), U0, committedAt(WALL + HOUR));

        assertThat(expired(offsets, Long.MIN_VALUE, Set.of(), HOUR - 1)).isEmpty();
        assertThat(expired(offsets, Long.MIN_VALUE, Set.of(), HOUR)).containsOnlyKeys(T0);
        assertThat(expired(offsets, Long.MIN_VALUE, Set.of(), 2 * HOUR)).containsOnlyKeys(T0, U0);
    }

    @Test
    void shouldKeepTheOffsetsOfTopicsAGroupWithMembersKeepsAndAgeTheOthersFromTheirCommits() {
        Map<TopicPartition, CommittedOffset> offsets = Map.of(T0, committedAt(WALL), U0, committedAt(WALL));

        assertThat(expired(offsets, Long.MAX_VALUE, Set.of("t", "u"), 100 * HOUR)).isEmpty();
        assertThat(expired(offsets, Long.MAX_VALUE, Set.of("t"), HOUR - 1)).isEmpty();
        assertThat(expired(offsets, Long.MAX_VALUE, Set.of("t"), HOUR)).containsOnlyKeys(U0);
    }

    @Test
    void shouldReadKafkasNamesWithTheirDefaultsAndLowerBounds() {
        assertThat(OffsetExpiration.Config.fromProperties(Map.of()))
                .isEqualTo(new OffsetExpiration.Config(7 * 24 * HOUR, 600_000));
        assertThat(OffsetExpiration.Config.fromProperties(Map.of("offsets.retention.minutes", "1",
                "offsets.retention.check.interval.ms", "1"))).isEqualTo(new OffsetExpiration.Config(60_000, 1));
        assertThatThrownBy(() -> OffsetExpiration.Config.fromProperties(Map.of("offsets.retention.minutes", "0")))
                .hasMessageContaining("offsets.retention.minutes");
        assertThatThrownBy(() -> OffsetExpiration.Config.fromProperties(
                Map.of("offsets.retention.check.interval.ms", "0"))).hasMessageContaining("check.interval");
        assertThatThrownBy(() -> OffsetExpiration.Config.fromProperties(
                Map.of("offsets.retention.minutes", String.valueOf(1L + Integer.MAX_VALUE))))
                .hasMessageContaining("offsets.retention.minutes");
    }

    // ------------------------------------------------------------------ what the classic coordinator says

    private final ClassicGroupCoordinator coordinator = new ClassicGroupCoordinator(
            new ClassicGroupConfig(1_000, 60_000, 0, 100, 300_000, 1_000_000), () -> "m");

    private static byte[] subscription(String... topics) {
        ByteBuffer b = ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of(topics)));
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }

    /** Joins a member subscribed to {@code topics} at {@code nowMs} and syncs it: the group is Stable. */
    private String stableMember(long nowMs, String... topics) {
        ClassicJoin first = new ClassicJoin("g", "", null, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                List.of(new ClassicProtocol("range", subscription(topics))), true, true);
        List<ClassicJoinResult> answers = new ArrayList<>();
        coordinator.join(first, nowMs, answers::add);
        String id = answers.get(0).memberId();
        coordinator.join(new ClassicJoin("g", id, null, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                first.protocols(), true, true), nowMs, answers::add);
        coordinator.onDeadlines(nowMs); // the (zero) initial delay
        assertThat(coordinator.emptySinceMs("g")).as("joined").isEqualTo(Long.MAX_VALUE);
        coordinator.sync(new ClassicSync("g", 1, id, null, "consumer", "range", Map.of()), nowMs, r -> { });
        assertThat(coordinator.describe("g").orElseThrow().state()).isEqualTo(ClassicGroupState.STABLE);
        return id;
    }

    @Test
    void shouldTellWhenAClassicGroupBecameEmptyAndThatASimpleGroupNeverHadMembers() {
        // A group of commits alone (generation -1) never had members
        coordinator.validateOffsetCommit("simple", "", null, -1, (short) 9, 5);
        assertThat(coordinator.emptySinceMs("simple")).isEqualTo(Long.MIN_VALUE);
        assertThat(coordinator.emptySinceMs("none")).isEqualTo(Long.MAX_VALUE);

        // A member that joins and leaves: the group has members until it left, then is Empty since then
        String member = stableMember(1_000, "t");
        coordinator.leave("g", List.of(new ClassicLeave.Member(member, null)), 7_000);
        assertThat(coordinator.emptySinceMs("g")).isEqualTo(7_000);

        // A restored group is Empty from when it was restored
        coordinator.restoreEmptyGroup("restored", 9_000);
        assertThat(coordinator.emptySinceMs("restored")).isEqualTo(9_000);
    }

    @Test
    void shouldLetAStableConsumerGroupKeepOnlyTheOffsetsOfTopicsItsMembersSubscribeTo() {
        stableMember(1_000, "t");

        assertThat(coordinator.keepsOffsetsOf("g", "t")).isTrue();
        assertThat(coordinator.keepsOffsetsOf("g", "u")).isFalse();
    }

    @Test
    void shouldKeepEveryOffsetOfAClassicGroupThatIsNotStableOrNotOfTheConsumerProtocol() {
        // Given a member that joined but has not synced (CompletingRebalance)
        ClassicJoin join = new ClassicJoin("g", "", null, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                List.of(new ClassicProtocol("range", subscription("t"))), true, true);
        List<ClassicJoinResult> answers = new ArrayList<>();
        coordinator.join(join, 1_000, answers::add);
        coordinator.join(new ClassicJoin("g", answers.get(0).memberId(), null, "client", "/127.0.0.1", 10_000, 30_000,
                "consumer", join.protocols(), true, true), 1_000, answers::add);
        coordinator.onDeadlines(1_000);
        assertThat(coordinator.describe("g").orElseThrow().state()).isEqualTo(ClassicGroupState.COMPLETING_REBALANCE);
        assertThat(coordinator.keepsOffsetsOf("g", "u")).isTrue();

        // And a Connect-style group, whose member metadata is not a consumer subscription
        ClassicJoin connect = new ClassicJoin("c", "", null, "client", "/127.0.0.1", 10_000, 30_000, "connect",
                List.of(new ClassicProtocol("sessioned", new byte[] {1})), true, true);
        List<ClassicJoinResult> connectAnswers = new ArrayList<>();
        coordinator.join(connect, 1_000, connectAnswers::add);
        assertThat(coordinator.emptySinceMs("c")).as("a member about to join").isEqualTo(Long.MAX_VALUE);
        assertThat(coordinator.keepsOffsetsOf("c", "u")).isTrue();
    }
}
