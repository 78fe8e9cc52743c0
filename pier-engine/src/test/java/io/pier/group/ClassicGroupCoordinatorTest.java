package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** The classic coordinator driven by hand: every time is passed in, callbacks are collected. */
class ClassicGroupCoordinatorTest {
    private static final int SESSION_MS = 10_000;
    private static final int REBALANCE_MS = 30_000;
    private final AtomicInteger ids = new AtomicInteger();
    private final ClassicGroupCoordinator coordinator = new ClassicGroupCoordinator(
            new ClassicGroupConfig(1_000, 60_000, 0, 100, 300_000, 1_000), () -> "id" + ids.incrementAndGet());
    private long now = 1_000;

    private static ClassicJoin join(String memberId, String instanceId, List<ClassicProtocol> protocols) {
        return new ClassicJoin("g", memberId, instanceId, "client", "/127.0.0.1", SESSION_MS, REBALANCE_MS,
                "consumer", protocols, true, true);
    }

    private static List<ClassicProtocol> range() {
        return List.of(new ClassicProtocol("range", new byte[] {1}));
    }

    private List<ClassicJoinResult> joins(ClassicJoin req) {
        List<ClassicJoinResult> out = new ArrayList<>();
        coordinator.join(req, now, out::add);
        return out;
    }

    /** A dynamic member's two-step join (KIP-394); returns its id. */
    private String newMember(List<ClassicJoinResult> answers) {
        List<ClassicJoinResult> first = joins(join("", null, range()));
        assertThat(first).singleElement().satisfies(r -> assertThat(r.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED));
        String id = first.get(0).memberId();
        coordinator.join(join(id, null, range()), now, answers::add);
        return id;
    }

    private void tick(long ms) {
        now += ms;
        for (int i = 0; i < 10 && coordinator.nextDeadlineMs() <= now; i++) {
            coordinator.onDeadlines(now);
        }
    }

    private String state() {
        return coordinator.describe("g").orElseThrow().state().toString();
    }

    @Test
    void shouldFormAGenerationAndHandTheLeadersAssignmentToEveryMember() {
        // Given two members that joined during the (zero) initial delay
        List<ClassicJoinResult> a = new ArrayList<>();
        List<ClassicJoinResult> b = new ArrayList<>();
        String first = newMember(a);
        String second = newMember(b);
        assertThat(a).isEmpty();

        // When the delay ends
        tick(0);

        // Then both are answered with generation 1; only the leader sees the members
        assertThat(a).singleElement().satisfies(r -> {
            assertThat(r.generationId()).isEqualTo(1);
            assertThat(r.leaderId()).isEqualTo(first);
            assertThat(r.protocolName()).isEqualTo("range");
            assertThat(r.members()).extracting(ClassicJoinResult.Member::memberId).containsExactly(first, second);
        });
        assertThat(b.get(0).members()).isEmpty();

        // And the follower's SyncGroup waits for the leader's, which hands out both assignments
        List<ClassicSyncResult> followerSync = new ArrayList<>();
        coordinator.sync(new ClassicSync("g", 1, second, null, "consumer", "range", Map.of()), now, followerSync::add);
        assertThat(followerSync).isEmpty();
        List<ClassicSyncResult> leaderSync = new ArrayList<>();
        coordinator.sync(new ClassicSync("g", 1, first, null, "consumer", "range",
                Map.of(first, new byte[] {10}, second, new byte[] {20})), now, leaderSync::add);
        assertThat(followerSync).singleElement().satisfies(r -> assertThat(r.assignment()).containsExactly(20));
        assertThat(leaderSync).singleElement().satisfies(r -> assertThat(r.assignment()).containsExactly(10));
        assertThat(state()).isEqualTo("Stable");
    }

    @Test
    void shouldRebalanceWhenAMemberStopsHeartbeatingAndAnswerHeartbeatsWithRebalanceInProgress() {
        // Given a stable group of two
        List<ClassicJoinResult> a = new ArrayList<>();
        List<ClassicJoinResult> b = new ArrayList<>();
        String first = newMember(a);
        String second = newMember(b);
        tick(0);
        coordinator.sync(new ClassicSync("g", 1, first, null, null, null, Map.of()), now, r -> { });
        coordinator.sync(new ClassicSync("g", 1, second, null, null, null, Map.of()), now, r -> { });

        // When only the first keeps heartbeating past the second's session timeout
        tick(SESSION_MS / 2);
        assertThat(coordinator.heartbeat("g", first, null, 1, now)).isEqualTo(Errors.NONE);
        tick(SESSION_MS / 2 + 1);

        // Then the second is gone, the first is told to rejoin, and rejoining alone makes generation 2
        assertThat(state()).isEqualTo("PreparingRebalance");
        assertThat(coordinator.heartbeat("g", first, null, 1, now)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(coordinator.heartbeat("g", second, null, 1, now)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        List<ClassicJoinResult> rejoin = joins(join(first, null, range()));
        assertThat(rejoin).singleElement().satisfies(r -> {
            assertThat(r.generationId()).isEqualTo(2);
            assertThat(r.members()).extracting(ClassicJoinResult.Member::memberId).containsExactly(first);
        });
    }

    @Test
    void shouldRefuseBadRequestsWithKafkasCodesAndLeaveTheGroupAsItWas() {
        // Given a stable group of one at generation 1
        List<ClassicJoinResult> a = new ArrayList<>();
        String member = newMember(a);
        tick(0);
        coordinator.sync(new ClassicSync("g", 1, member, null, null, null, Map.of()), now, r -> { });

        // Then bad joins, syncs and commits are refused, and the group stays Stable at generation 1
        assertThat(joins(join("", null, List.of()))).singleElement()
                .satisfies(r -> assertThat(r.error()).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL));
        assertThat(joins(join("", null, List.of(new ClassicProtocol("other", new byte[0]))))).singleElement()
                .satisfies(r -> assertThat(r.error()).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL));
        assertThat(joins(join("nobody", null, range()))).singleElement()
                .satisfies(r -> assertThat(r.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID));
        assertThat(coordinator.validateOffsetCommit("g", "nobody", null, 1, (short) 9, now))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.validateOffsetCommit("g", member, null, 0, (short) 9, now))
                .isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(coordinator.validateOffsetCommit("g", "", null, -1, (short) 9, now))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.validateOffsetCommit("g", member, null, 1, (short) 9, now)).isEqualTo(Errors.NONE);
        assertThat(coordinator.deleteGroup("g")).isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(state()).isEqualTo("Stable");
        assertThat(coordinator.heartbeat("g", member, null, 1, now)).isEqualTo(Errors.NONE);

        // And a first join without protocols creates no group
        List<ClassicJoinResult> none = new ArrayList<>();
        coordinator.join(new ClassicJoin("fresh", "", null, "c", "h", SESSION_MS, REBALANCE_MS, "consumer",
                List.of(), true, true), now, none::add);
        assertThat(none.get(0).error()).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(coordinator.exists("fresh")).isFalse();
    }

    @Test
    void shouldRefuseOversizedMetadataAndAssignmentsWithUnknownServerErrorAndLeaveTheGroupAsItWas() {
        // Given a group of two in CompletingRebalance, under a 1,000-byte group record
        List<ClassicJoinResult> a = new ArrayList<>();
        List<ClassicJoinResult> b = new ArrayList<>();
        String first = newMember(a);
        String second = newMember(b);
        tick(0);
        List<ClassicSyncResult> followerSync = new ArrayList<>();
        coordinator.sync(new ClassicSync("g", 1, second, null, "consumer", "range", Map.of()), now, followerSync::add);

        // When a member joins with subscription metadata larger than the record, and the leader
        // syncs assignments that together do not fit it
        List<ClassicJoinResult> big = joins(join("", null, List.of(new ClassicProtocol("range", new byte[1_001]))));
        List<ClassicSyncResult> leaderSync = new ArrayList<>();
        coordinator.sync(new ClassicSync("g", 1, first, null, "consumer", "range",
                Map.of(first, new byte[600], second, new byte[600])), now, leaderSync::add);

        // Then both get Kafka's UNKNOWN_SERVER_ERROR, the follower still waits, and the group is as it was
        assertThat(big).singleElement().satisfies(r -> assertThat(r.error()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR));
        assertThat(leaderSync).singleElement()
                .satisfies(r -> assertThat(r.error()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR));
        assertThat(followerSync).isEmpty();
        assertThat(state()).isEqualTo("CompletingRebalance");
        assertThat(coordinator.describe("g").orElseThrow().members()).hasSize(2);

        // And a leader's sync that fits still completes the generation
        coordinator.sync(new ClassicSync("g", 1, first, null, "consumer", "range",
                Map.of(first, new byte[] {10}, second, new byte[] {20})), now, leaderSync::add);
        assertThat(followerSync).singleElement().satisfies(r -> assertThat(r.assignment()).containsExactly(20));
        assertThat(state()).isEqualTo("Stable");

        // And a first join with oversized metadata creates no group
        List<ClassicJoinResult> fresh = new ArrayList<>();
        coordinator.join(new ClassicJoin("fresh", "", null, "c", "h", SESSION_MS, REBALANCE_MS, "consumer",
                List.of(new ClassicProtocol("range", new byte[1_001])), true, true), now, fresh::add);
        assertThat(fresh.get(0).error()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(coordinator.exists("fresh")).isFalse();
    }

    @Test
    void shouldGiveARestartedStaticMemberItsAssignmentWithoutARebalanceAndFenceTheOldId() {
        // Given a stable group of one static member
        List<ClassicJoinResult> a = new ArrayList<>();
        coordinator.join(join("", "instance-1", range()), now, a::add);
        tick(0);
        String oldId = a.get(0).memberId();
        coordinator.sync(new ClassicSync("g", 1, oldId, "instance-1", null, null, Map.of(oldId, new byte[] {7})),
                now, r -> { });

        // When the same instance joins again without a member id
        List<ClassicJoinResult> again = joins(join("", "instance-1", range()));

        // Then it gets a new id in the same generation, and the old id is fenced
        assertThat(again).singleElement().satisfies(r -> {
            assertThat(r.error()).isEqualTo(Errors.NONE);
            assertThat(r.generationId()).isEqualTo(1);
            assertThat(r.memberId()).isNotEqualTo(oldId);
        });
        assertThat(state()).isEqualTo("Stable");
        assertThat(coordinator.heartbeat("g", oldId, "instance-1", 1, now)).isEqualTo(Errors.FENCED_INSTANCE_ID);
        List<ClassicSyncResult> sync = new ArrayList<>();
        coordinator.sync(new ClassicSync("g", 1, again.get(0).memberId(), "instance-1", null, null, Map.of()), now,
                sync::add);
        assertThat(sync.get(0).assignment()).containsExactly(7);
    }

    @Test
    void shouldCountEveryGenerationStartedAndKeepTheCountWhenTheGroupIsDeleted() {
        // Given two members in generation 1
        String first = newMember(new ArrayList<>());
        String second = newMember(new ArrayList<>());
        assertThat(coordinator.rebalances()).isZero();
        tick(0);
        assertThat(coordinator.rebalances()).isEqualTo(1);

        // When one leaves: the rebalance starts a generation only once the other rejoined
        coordinator.leave("g", List.of(new ClassicLeave.Member(first, null)), now);
        assertThat(state()).isEqualTo("PreparingRebalance");
        assertThat(coordinator.rebalances()).isEqualTo(1);
        coordinator.join(join(second, null, range()), now, r -> { });
        assertThat(coordinator.rebalances()).isEqualTo(2);

        // And the other leaves: one more generation, Empty
        coordinator.leave("g", List.of(new ClassicLeave.Member(second, null)), now);
        assertThat(state()).isEqualTo("Empty");
        assertThat(coordinator.rebalances()).isEqualTo(3);

        // Then deleting the group keeps the count, and a new group of the same id adds to it
        assertThat(coordinator.deleteGroup("g")).isEqualTo(Errors.NONE);
        assertThat(coordinator.rebalances()).isEqualTo(3);
        newMember(new ArrayList<>());
        tick(0);
        assertThat(coordinator.rebalances()).isEqualTo(4);
    }
}
