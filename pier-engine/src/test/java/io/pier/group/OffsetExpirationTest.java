package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.state.CommittedOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Utils;
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
        return Utils.toArray(ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of(topics))));
    }

    /**
     * A member of {@code groupId} with protocol type {@code type} whose metadata subscribes to
     * {@code topics}, joined at {@code nowMs} (the group then completes its rebalance), and synced
     * if {@code sync} (the group is then Stable).
     */
    private String member(String groupId, String type, boolean sync, long nowMs, String... topics) {
        List<ClassicProtocol> protocols = List.of(new ClassicProtocol("range", subscription(topics)));
        List<ClassicJoinResult> answers = new ArrayList<>();
        coordinator.join(new ClassicJoin(groupId, "", null, "client", "/127.0.0.1", 10_000, 30_000, type, protocols,
                true, true), nowMs, answers::add);
        String id = answers.get(0).memberId();
        assertThat(coordinator.emptySinceMs(groupId)).as("a member about to join").isEqualTo(Long.MAX_VALUE);
        coordinator.join(new ClassicJoin(groupId, id, null, "client", "/127.0.0.1", 10_000, 30_000, type, protocols,
                true, true), nowMs, answers::add);
        coordinator.onDeadlines(nowMs); // the (zero) initial delay
        assertThat(coordinator.emptySinceMs(groupId)).as("joined").isEqualTo(Long.MAX_VALUE);
        if (sync) {
            coordinator.sync(new ClassicSync(groupId, 1, id, null, type, "range", Map.of()), nowMs, r -> { });
        }
        assertThat(coordinator.describe(groupId).orElseThrow().state())
                .isEqualTo(sync ? ClassicGroupState.STABLE : ClassicGroupState.COMPLETING_REBALANCE);
        return id;
    }

    @Test
    void shouldTellWhenAClassicGroupBecameEmptyAndThatASimpleGroupNeverHadMembers() {
        // A group of commits alone (generation -1) never had members
        coordinator.validateOffsetCommit("simple", "", null, -1, (short) 9, 5);
        assertThat(coordinator.emptySinceMs("simple")).isEqualTo(Long.MIN_VALUE);
        assertThat(coordinator.emptySinceMs("none")).isEqualTo(Long.MAX_VALUE);

        // A member that joins and leaves: the group has members until it left, then is Empty since then
        String member = member("g", "consumer", true, 1_000, "t");
        coordinator.leave("g", List.of(new ClassicLeave.Member(member, null)), 7_000);
        assertThat(coordinator.emptySinceMs("g")).isEqualTo(7_000);

        // A restored group is Empty from when it was restored
        coordinator.restoreEmptyGroup("restored", 9_000);
        assertThat(coordinator.emptySinceMs("restored")).isEqualTo(9_000);
    }

    @Test
    void shouldLetOnlyAStableConsumerGroupLetGoOfTheOffsetsOfTopicsItsMembersDoNotSubscribeTo() {
        member("stable", "consumer", true, 1_000, "t");
        assertThat(coordinator.keepsOffsetsOf("stable", "t")).isTrue();
        assertThat(coordinator.keepsOffsetsOf("stable", "u")).isFalse();

        // Not while it rebalances, as Kafka: a member may be about to subscribe to u
        member("rebalancing", "consumer", false, 1_000, "t");
        assertThat(coordinator.keepsOffsetsOf("rebalancing", "u")).isTrue();

        // Nor for another protocol type (Connect, ...), even with metadata that reads as a subscription
        member("connect", "connect", true, 1_000, "t");
        assertThat(coordinator.keepsOffsetsOf("connect", "u")).isTrue();
    }
}
