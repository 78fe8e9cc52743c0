package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ShareGroupCoordinatorTest {

    private static final String GROUP = "orders-workers";

    private final FakeTopics topics = new FakeTopics();
    private ShareGroupCoordinator coordinator;
    private TopicInfo orders;
    private long nowMs = 1_000;

    @BeforeEach
    void setUp() {
        orders = topics.create("orders", 3);
        coordinator = new ShareGroupCoordinator(ShareGroupBrokerConfig.DEFAULTS, topics);
    }

    @Test
    void shouldHandOutWholeAssignmentInFirstHeartbeat() {
        HeartbeatResponse response = join("m1", "orders");

        assertThat(response.error()).isEqualTo(Errors.NONE);
        assertThat(response.memberId()).isEqualTo("m1");
        assertThat(response.memberEpoch()).isEqualTo(1);
        assertThat(response.heartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(response.assignment()).containsExactly(Map.entry(orders.id(), List.of(0, 1, 2)));
    }

    @Test
    void shouldDropAReleasedGroupWithItsMembersAndTheirSessionDeadlines() {
        // Given a group with a member, whose coordination moves to another gateway node
        join("m1", "orders");

        // When it is released here
        coordinator.releaseGroup(GROUP);

        // Then it is gone, and its member's session deadline with it (no expiry finds a missing group)
        assertThat(coordinator.exists(GROUP)).isFalse();
        assertThat(coordinator.listGroups()).isEmpty();
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(coordinator.expireSessions(nowMs + 3_600_000)).isEmpty();
    }

    @Test
    void shouldAnswerJoinToMissingTopicWithEmptyAssignment() {
        HeartbeatResponse response = join("m1", "not-yet");

        assertThat(response.error()).isEqualTo(Errors.NONE);
        assertThat(response.assignment()).isNotNull().isEmpty();
    }

    @Test
    void shouldRejectMalformedHeartbeatsAsInvalidRequest() {
        assertInvalid(new HeartbeatRequest(GROUP, null, 0, null, List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "", 0, null, List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "x".repeat(37), 0, null, List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest("", "m1", 0, null, List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest(null, "m1", 0, null, List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "m1", 0, "", List.of("orders"), "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "m1", 0, null, null, "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "m1", 0, null, List.of(), "c", "h"));
        assertInvalid(new HeartbeatRequest(GROUP, "m1", -2, null, null, "c", "h"));
        assertThat(coordinator.exists(GROUP)).isFalse();
    }

    @Test
    void shouldAcceptMemberIdOf36Characters() {
        String uuidLike = java.util.UUID.randomUUID().toString();
        assertThat(uuidLike).hasSize(36);

        HeartbeatResponse response =
                coordinator.heartbeat(new HeartbeatRequest(GROUP, uuidLike, 0, "rack-a", List.of("orders"), "c", "h"), nowMs);

        assertThat(response.error()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAnswerUnknownMemberIdForUnknownMemberOfKnownGroup() {
        join("m1", "orders");

        HeartbeatResponse response = heartbeat("stranger", 1);

        assertThat(response.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldAnswerUnknownMemberIdNotGroupIdNotFoundAfterRestart() {
        int epoch = join("m1", "orders").memberEpoch();
        coordinator = new ShareGroupCoordinator(ShareGroupBrokerConfig.DEFAULTS, topics);

        HeartbeatResponse response = heartbeat("m1", epoch);

        assertThat(response.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.heartbeat(leaveRequest("m1"), nowMs).error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(join("m1", "orders").error()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldFenceEpochAboveStoredEpoch() {
        int epoch = join("m1", "orders").memberEpoch();

        assertThat(heartbeat("m1", epoch + 1).error()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
    }

    @Test
    void shouldFenceEpochOlderThanPreviousEpoch() {
        join("m1", "orders");
        join("m2", "orders");
        join("m3", "orders");
        int current = heartbeat("m1", 1).memberEpoch();
        assertThat(current).isEqualTo(3);

        HeartbeatResponse response = heartbeat("m1", 2);

        assertThat(response.error()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
    }

    @Test
    void shouldAcceptPreviousEpochAndResendAssignment() {
        join("m1", "orders");
        join("m2", "orders");
        HeartbeatResponse lost = heartbeat("m1", 1);
        assertThat(lost.memberEpoch()).isEqualTo(2);

        HeartbeatResponse retry = heartbeat("m1", 1);

        assertThat(retry.error()).isEqualTo(Errors.NONE);
        assertThat(retry.memberEpoch()).isEqualTo(2);
        assertThat(retry.assignment()).isEqualTo(lost.assignment());
    }

    @Test
    void shouldReturnNullAssignmentWhenNothingChanged() {
        int epoch = join("m1", "orders").memberEpoch();

        HeartbeatResponse response = heartbeat("m1", epoch);

        assertThat(response.error()).isEqualTo(Errors.NONE);
        assertThat(response.memberEpoch()).isEqualTo(epoch);
        assertThat(response.assignment()).isNull();
    }

    @Test
    void shouldReturnAssignmentWhenRequestCarriesSubscription() {
        int epoch = join("m1", "orders").memberEpoch();

        HeartbeatResponse response = coordinator.heartbeat(
                new HeartbeatRequest(GROUP, "m1", epoch, null, List.of("orders"), "c", "h"), nowMs);

        assertThat(response.memberEpoch()).isEqualTo(epoch);
        assertThat(response.assignment()).containsOnlyKeys(orders.id());
    }

    @Test
    void shouldDeliverNewTargetOnNextHeartbeatAfterRebalance() {
        HeartbeatResponse first = join("m1", "orders");
        HeartbeatResponse second = join("m2", "orders");

        HeartbeatResponse next = heartbeat("m1", first.memberEpoch());

        assertThat(second.memberEpoch()).isEqualTo(2);
        assertThat(next.memberEpoch()).isEqualTo(2);
        List<Integer> all = new ArrayList<>(next.assignment().get(orders.id()));
        all.addAll(second.assignment().get(orders.id()));
        assertThat(all).containsExactlyInAnyOrder(0, 1, 2);
    }

    @Test
    void shouldFollowSubscriptionChange() {
        TopicInfo payments = topics.create("payments", 2);
        int epoch = join("m1", "orders").memberEpoch();

        HeartbeatResponse response = coordinator.heartbeat(
                new HeartbeatRequest(GROUP, "m1", epoch, null, List.of("payments"), "c", "h"), nowMs);

        assertThat(response.memberEpoch()).isEqualTo(epoch + 1);
        assertThat(response.assignment()).containsExactly(Map.entry(payments.id(), List.of(0, 1)));
    }

    @Test
    void shouldRefuseNewMemberWhenGroupIsFull() {
        coordinator = new ShareGroupCoordinator(
                ShareGroupBrokerConfig.fromProperties(Map.of("group.share.max.size", "2")), topics);
        join("m1", "orders");
        join("m2", "orders");

        HeartbeatResponse third = join("m3", "orders");
        HeartbeatResponse rejoin = join("m2", "orders");

        assertThat(third.error()).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        assertThat(rejoin.error()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldRemoveMemberOnLeaveAndGiveRestToOthers() {
        join("m1", "orders");
        int epoch2 = join("m2", "orders").memberEpoch();

        HeartbeatResponse leave = coordinator.heartbeat(leaveRequest("m1"), nowMs);
        HeartbeatResponse remaining = heartbeat("m2", epoch2);

        assertThat(leave.error()).isEqualTo(Errors.NONE);
        assertThat(leave.memberEpoch()).isEqualTo(-1);
        assertThat(leave.assignment()).isNull();
        assertThat(coordinator.isMember(GROUP, "m1")).isFalse();
        assertThat(remaining.assignment()).containsExactly(Map.entry(orders.id(), List.of(0, 1, 2)));
    }

    @Test
    void shouldAnswerUnknownMemberIdToLeaveOfUnknownMember() {
        join("m1", "orders");

        assertThat(coordinator.heartbeat(leaveRequest("ghost"), nowMs).error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldKeepEmptyGroupAfterAllLeaveAndAllowRejoin() {
        join("m1", "orders");
        coordinator.heartbeat(leaveRequest("m1"), nowMs);

        assertThat(coordinator.describe(GROUP)).get().extracting(GroupDescription::state).isEqualTo(ShareGroupState.EMPTY);
        HeartbeatResponse rejoin = join("m1", "orders");

        assertThat(rejoin.error()).isEqualTo(Errors.NONE);
        assertThat(rejoin.memberEpoch()).isEqualTo(3);
        assertThat(rejoin.assignment()).containsExactly(Map.entry(orders.id(), List.of(0, 1, 2)));
        assertThat(coordinator.describe(GROUP).orElseThrow().state()).isEqualTo(ShareGroupState.STABLE);
    }

    @Test
    void shouldExpireSilentMemberAndRebalance() {
        join("m1", "orders");
        int epoch2 = join("m2", "orders").memberEpoch();
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(nowMs + 45_000);

        nowMs += 30_000;
        heartbeat("m2", epoch2);
        assertThat(coordinator.expireSessions(nowMs)).isEmpty();
        nowMs += 15_000;
        List<MemberKey> expired = coordinator.expireSessions(nowMs);

        assertThat(expired).containsExactly(new MemberKey(GROUP, "m1"));
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(nowMs - 15_000 + 45_000);
        HeartbeatResponse survivor = heartbeat("m2", epoch2);
        assertThat(survivor.assignment()).containsExactly(Map.entry(orders.id(), List.of(0, 1, 2)));
        nowMs += 45_000;
        assertThat(coordinator.expireSessions(nowMs)).containsExactly(new MemberKey(GROUP, "m2"));
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(coordinator.describe(GROUP).orElseThrow().state()).isEqualTo(ShareGroupState.EMPTY);
    }

    @Test
    void shouldUseGroupSessionTimeoutAndHeartbeatInterval() {
        coordinator = new ShareGroupCoordinator(ShareGroupBrokerConfig.fromProperties(Map.of(
                "group.share.min.session.timeout.ms", "1000",
                "group.share.min.heartbeat.interval.ms", "100")), topics);
        coordinator.alterGroupConfig(GROUP, Map.of(
                "share.session.timeout.ms", "2000", "share.heartbeat.interval.ms", "200"));

        HeartbeatResponse response = join("m1", "orders");

        assertThat(response.heartbeatIntervalMs()).isEqualTo(200);
        assertThat(coordinator.expireSessions(nowMs + 1_999)).isEmpty();
        assertThat(coordinator.expireSessions(nowMs + 2_000)).containsExactly(new MemberKey(GROUP, "m1"));
    }

    @Test
    void shouldSpread100MembersOver10Partitions() {
        topics.create("big", 10);
        Map<String, HeartbeatResponse> last = new HashMap<>();
        for (int i = 0; i < 100; i++) {
            last.put("m" + i, join("m" + i, "big"));
        }
        Map<Integer, Integer> owners = new HashMap<>();
        for (int i = 0; i < 100; i++) {
            HeartbeatResponse r = heartbeat("m" + i, last.get("m" + i).memberEpoch());
            Map<Uuid, List<Integer>> assignment = r.assignment() != null ? r.assignment() : last.get("m" + i).assignment();
            List<Integer> partitions = assignment.values().iterator().next();
            assertThat(partitions).hasSize(1);
            owners.merge(partitions.get(0), 1, Integer::sum);
        }
        assertThat(owners).hasSize(10).allSatisfy((p, count) -> assertThat(count).isEqualTo(10));
    }

    @Test
    void shouldLetEightMembersShareOnePartition() {
        TopicInfo single = topics.create("single", 1);
        List<HeartbeatResponse> joins = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            joins.add(join("m" + i, "single"));
        }

        for (int i = 0; i < 8; i++) {
            HeartbeatResponse r = heartbeat("m" + i, joins.get(i).memberEpoch());
            Map<Uuid, List<Integer>> assignment = r.assignment() != null ? r.assignment() : joins.get(i).assignment();
            assertThat(assignment).containsExactly(Map.entry(single.id(), List.of(0)));
        }
    }

    @Test
    void shouldReassignWhenPartitionsAreAdded() {
        int epoch = join("m1", "orders").memberEpoch();
        topics.grow("orders", 5);

        coordinator.onTopicsChanged(nowMs);
        HeartbeatResponse response = heartbeat("m1", epoch);

        assertThat(response.memberEpoch()).isEqualTo(epoch + 1);
        assertThat(response.assignment()).containsExactly(Map.entry(orders.id(), List.of(0, 1, 2, 3, 4)));
    }

    @Test
    void shouldAssignTopicCreatedAfterSubscription() {
        int epoch = join("m1", "later").memberEpoch();
        TopicInfo later = topics.create("later", 2);

        coordinator.onTopicsChanged(nowMs);
        HeartbeatResponse response = heartbeat("m1", epoch);

        assertThat(response.assignment()).containsExactly(Map.entry(later.id(), List.of(0, 1)));
    }

    @Test
    void shouldDropDeletedTopicFromAssignment() {
        int epoch = join("m1", "orders").memberEpoch();
        topics.delete("orders");

        coordinator.onTopicsChanged(nowMs);
        HeartbeatResponse response = heartbeat("m1", epoch);

        assertThat(response.assignment()).isEmpty();
    }

    @Test
    void shouldNotBumpEpochWhenTopicsDidNotChange() {
        int epoch = join("m1", "orders").memberEpoch();

        coordinator.onTopicsChanged(nowMs);

        assertThat(heartbeat("m1", epoch).memberEpoch()).isEqualTo(epoch);
    }

    @Test
    void shouldDescribeGroupAndMembers() {
        coordinator.heartbeat(new HeartbeatRequest(GROUP, "m1", 0, "rack-a", List.of("orders", "orders"), "client-1", "/10.0.0.1"), nowMs);

        GroupDescription description = coordinator.describe(GROUP).orElseThrow();

        assertThat(description.state()).isEqualTo(ShareGroupState.STABLE);
        assertThat(description.groupEpoch()).isEqualTo(1);
        assertThat(description.assignmentEpoch()).isEqualTo(1);
        assertThat(description.assignorName()).isEqualTo("simple");
        assertThat(description.members()).containsExactly(new MemberDescription("m1", "rack-a", 1, "client-1",
                "/10.0.0.1", List.of("orders"), List.of(new AssignedTopic(orders.id(), "orders", List.of(0, 1, 2)))));
        assertThat(coordinator.describe("nobody")).isEmpty();
    }

    @Test
    void shouldListGroupsWithState() {
        join("m1", "orders");
        coordinator.heartbeat(new HeartbeatRequest("idle", "m9", 0, null, List.of("orders"), "c", "h"), nowMs);
        coordinator.heartbeat(leaveRequest("idle", "m9"), nowMs);

        assertThat(coordinator.listGroups()).containsExactly(
                new GroupListing("idle", ShareGroupState.EMPTY), new GroupListing(GROUP, ShareGroupState.STABLE));
    }

    @Test
    void shouldDeleteOnlyEmptyGroups() {
        join("m1", "orders");
        coordinator.alterGroupConfig(GROUP, Map.of("share.delivery.count.limit", "3"));

        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.NON_EMPTY_GROUP);
        coordinator.heartbeat(leaveRequest("m1"), nowMs);
        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.NONE);
        assertThat(coordinator.exists(GROUP)).isFalse();
        assertThat(coordinator.describe(GROUP)).isEmpty();
        assertThat(coordinator.groupConfig(GROUP).effectiveDeliveryCountLimit()).isEqualTo(5);
        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
    }

    @Test
    void shouldStoreConfigForGroupThatDoesNotExistYet() {
        AlterConfigResult result = coordinator.alterGroupConfig("future", Map.of("share.record.lock.duration.ms", "20000"));

        assertThat(result.error()).isEqualTo(Errors.NONE);
        assertThat(coordinator.exists("future")).isFalse();
        assertThat(coordinator.groupConfig("future").effectiveRecordLockDurationMs()).isEqualTo(20_000);
        assertThat(coordinator.configuredGroupIds()).containsExactly("future");
    }

    @Test
    void shouldRejectInvalidConfigWithoutChangingAnything() {
        coordinator.alterGroupConfig(GROUP, Map.of("share.delivery.count.limit", "3"));

        AlterConfigResult result = coordinator.alterGroupConfig(GROUP, Map.of(
                "share.delivery.count.limit", "4", "share.record.lock.duration.ms", "1000"));

        assertThat(result.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(result.errorMessage()).isEqualTo("share.record.lock.duration.ms must be greater than or equal to 15000");
        assertThat(coordinator.groupConfig(GROUP).effectiveDeliveryCountLimit()).isEqualTo(3);
        assertThat(coordinator.alterGroupConfig(GROUP, Map.of("share.nope", "1")).error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(coordinator.alterGroupConfig("", Map.of("share.delivery.count.limit", "4")).error())
                .isEqualTo(Errors.INVALID_REQUEST);
    }

    @Test
    void shouldNotStoreValidateOnlyChanges() {
        AlterConfigResult result = coordinator.alterGroupConfig(GROUP, Map.of("share.delivery.count.limit", "4"), true);

        assertThat(result.error()).isEqualTo(Errors.NONE);
        assertThat(coordinator.groupConfig(GROUP).effectiveDeliveryCountLimit()).isEqualTo(5);
    }

    @Test
    void shouldRestoreGroupsAndConfigsFromSnapshot() {
        join("m1", "orders");
        coordinator.alterGroupConfig(GROUP, Map.of("share.auto.offset.reset", "earliest"));
        coordinator.alterGroupConfig("configured-only", Map.of("share.delivery.count.limit", "3"));
        long changes = coordinator.changeCount();

        ShareGroupsSnapshot snapshot = coordinator.snapshot();
        ShareGroupCoordinator restored = new ShareGroupCoordinator(ShareGroupBrokerConfig.DEFAULTS, topics, snapshot);

        assertThat(changes).isEqualTo(3);
        assertThat(restored.exists(GROUP)).isTrue();
        assertThat(restored.exists("configured-only")).isFalse();
        assertThat(restored.describe(GROUP).orElseThrow().state()).isEqualTo(ShareGroupState.EMPTY);
        assertThat(restored.groupConfig(GROUP).effectiveAutoOffsetReset()).isEqualTo(AutoOffsetReset.EARLIEST);
        assertThat(restored.groupConfig("configured-only").effectiveDeliveryCountLimit()).isEqualTo(3);
        assertThat(restored.heartbeat(new HeartbeatRequest(GROUP, "m1", 1, null, null, "c", "h"), nowMs).error())
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        HeartbeatResponse rejoin = restored.heartbeat(new HeartbeatRequest(GROUP, "m1", 0, null, List.of("orders"), "c", "h"), nowMs);
        assertThat(rejoin.memberEpoch()).isEqualTo(2);
    }

    private HeartbeatResponse join(String memberId, String... topicNames) {
        return coordinator.heartbeat(new HeartbeatRequest(GROUP, memberId, 0, null, List.of(topicNames), "client", "/127.0.0.1"), nowMs);
    }

    private HeartbeatResponse heartbeat(String memberId, int epoch) {
        return coordinator.heartbeat(new HeartbeatRequest(GROUP, memberId, epoch, null, null, "client", "/127.0.0.1"), nowMs);
    }

    private static HeartbeatRequest leaveRequest(String memberId) {
        return leaveRequest(GROUP, memberId);
    }

    private static HeartbeatRequest leaveRequest(String groupId, String memberId) {
        return new HeartbeatRequest(groupId, memberId, -1, null, null, "client", "/127.0.0.1");
    }

    private void assertInvalid(HeartbeatRequest request) {
        HeartbeatResponse response = coordinator.heartbeat(request, nowMs);
        assertThat(response.error()).as("%s", request).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(response.errorMessage()).isNotBlank();
    }

    @Test
    void shouldAllowOffsetChangesOnlyForAnEmptyGroup() {
        assertThat(coordinator.checkOffsetsChangeable("absent", false)).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(coordinator.exists("absent")).isFalse();

        assertThat(coordinator.checkOffsetsChangeable("created", true)).isEqualTo(Errors.NONE);
        assertThat(coordinator.describe("created")).hasValueSatisfying(
                d -> assertThat(d.state()).isEqualTo(ShareGroupState.EMPTY));

        join("m1", "orders");
        assertThat(coordinator.checkOffsetsChangeable(GROUP, true)).isEqualTo(Errors.NON_EMPTY_GROUP);
    }
}
