package io.pier.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.FakeTopics;
import io.pier.group.PartitionKey;
import io.pier.group.TopicInfo;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The KIP-848 coordinator driven by hand: no threads, time only through {@code nowMs}. */
class ConsumerGroupCoordinatorTest {
    private static final String GROUP = "g";
    private static final int SESSION_MS = 45_000;
    private static final int REBALANCE_MS = 30_000;

    private final FakeTopics topics = new FakeTopics();
    private final AtomicInteger ids = new AtomicInteger();
    private ConsumerGroupCoordinator coordinator;
    private TopicInfo orders;
    private long now = 1_000;

    @BeforeEach
    void setUp() {
        coordinator = new ConsumerGroupCoordinator(ConsumerGroupBrokerConfig.DEFAULTS, topics,
                () -> "generated-" + ids.incrementAndGet());
        orders = topics.create("orders", 4);
    }

    private static ConsumerHeartbeat join(String member, List<String> topicNames) {
        return new ConsumerHeartbeat(GROUP, member, 0, null, null, REBALANCE_MS, topicNames, null, null, Set.of(),
                "client-" + member, "/127.0.0.1");
    }

    private static ConsumerHeartbeat beat(String member, int epoch, Set<PartitionKey> owned) {
        return new ConsumerHeartbeat(GROUP, member, epoch, null, null, -1, null, null, null, owned, "client-" + member,
                "/127.0.0.1");
    }

    private Set<PartitionKey> parts(TopicInfo topic, int... partitions) {
        Set<PartitionKey> s = new HashSet<>();
        for (int p : partitions) {
            s.add(new PartitionKey(topic.id(), p));
        }
        return s;
    }

    private static Set<PartitionKey> owned(ConsumerHeartbeatResult r) {
        Set<PartitionKey> s = new HashSet<>();
        r.assignment().forEach((topic, ps) -> ps.forEach(p -> s.add(new PartitionKey(topic, p))));
        return s;
    }

    private ConsumerHeartbeatResult ok(ConsumerHeartbeat hb) {
        ConsumerHeartbeatResult r = coordinator.heartbeat(hb, now);
        assertThat(r.error()).as(r.errorMessage()).isEqualTo(Errors.NONE);
        return r;
    }

    private ConsumerGroupState state() {
        return coordinator.describe(GROUP).orElseThrow().state();
    }

    @Test
    void shouldGiveAFirstMemberEveryPartitionInItsFirstResponse() {
        ConsumerHeartbeatResult r = ok(join("a", List.of("orders")));

        assertThat(r.memberId()).isEqualTo("a");
        assertThat(r.memberEpoch()).isEqualTo(1);
        assertThat(r.heartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(owned(r)).isEqualTo(parts(orders, 0, 1, 2, 3));
        assertThat(state()).isEqualTo(ConsumerGroupState.STABLE);
    }

    @Test
    void shouldRevokeBeforeReassigning() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(beat("a", a.memberEpoch(), parts(orders, 0, 1, 2, 3)));

        // b joins: its target half is still a's, so it gets nothing yet, at the new epoch
        ConsumerHeartbeatResult b = ok(join("b", List.of("orders")));
        assertThat(b.memberEpoch()).isEqualTo(2);
        assertThat(b.assignment()).isEmpty();
        assertThat(b.heartbeatIntervalMs()).as("waiting members come back sooner").isEqualTo(100);
        assertThat(state()).isEqualTo(ConsumerGroupState.RECONCILING);

        // a is asked to give up two partitions and keeps its epoch until it has
        ConsumerHeartbeatResult a2 = ok(beat("a", 1, parts(orders, 0, 1, 2, 3)));
        assertThat(a2.memberEpoch()).isEqualTo(1);
        Set<PartitionKey> kept = owned(a2);
        assertThat(kept).hasSize(2);
        ConsumerHeartbeatResult stillOwning = ok(beat("a", 1, parts(orders, 0, 1, 2, 3)));
        assertThat(stillOwning.memberEpoch()).isEqualTo(1);
        assertThat(ok(beat("b", 2, Set.of())).assignment()).isNull(); // nothing freed yet

        // a reports the two gone: it moves to epoch 2, and b gets them on its next heartbeat
        ConsumerHeartbeatResult a3 = ok(beat("a", 1, kept));
        assertThat(a3.memberEpoch()).isEqualTo(2);
        ConsumerHeartbeatResult b2 = ok(beat("b", 2, Set.of()));
        Set<PartitionKey> all = new HashSet<>(kept);
        all.addAll(owned(b2));
        assertThat(owned(b2)).hasSize(2).doesNotContainAnyElementsOf(kept);
        assertThat(all).isEqualTo(parts(orders, 0, 1, 2, 3));
        assertThat(b2.heartbeatIntervalMs()).isEqualTo(5_000);
        ok(beat("b", 2, owned(b2)));
        assertThat(state()).isEqualTo(ConsumerGroupState.STABLE);
    }

    @Test
    void shouldFenceWrongEpochsButAcceptThePreviousOneWithASubset() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(beat("a", 1, owned(a)));
        assertThat(coordinator.heartbeat(beat("a", 2, owned(a)), now).error()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);

        topics.grow("orders", 6);
        coordinator.onTopicsChanged();
        ConsumerHeartbeatResult grown = ok(beat("a", 1, owned(a)));
        assertThat(grown.memberEpoch()).isEqualTo(2);
        assertThat(owned(grown)).hasSize(6);
        // The response with epoch 2 was lost: epoch 1 with a subset is still fine
        assertThat(ok(beat("a", 1, owned(a))).memberEpoch()).isEqualTo(2);
        assertThat(coordinator.heartbeat(beat("a", 1, null), now).error()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        assertThat(coordinator.heartbeat(beat("nobody", 3, Set.of()), now).error())
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldHandOverTheParitionsOfAMemberWhoseSessionEnded() {
        ok(join("a", List.of("orders")));
        now += 1_000;
        ConsumerHeartbeatResult b = ok(join("b", List.of("orders")));
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(1_000 + SESSION_MS);

        now = 1_000 + SESSION_MS;
        assertThat(coordinator.onDeadlines(now)).isEqualTo(1);

        ConsumerHeartbeatResult b2 = ok(beat("b", b.memberEpoch(), Set.of()));
        assertThat(owned(b2)).isEqualTo(parts(orders, 0, 1, 2, 3));
        assertThat(coordinator.describe(GROUP).orElseThrow().members()).extracting(m -> m.memberId())
                .containsExactly("b");
    }

    @Test
    void shouldFenceAMemberThatDoesNotRevokeWithinItsRebalanceTimeout() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(join("b", List.of("orders")));
        ok(beat("a", a.memberEpoch(), owned(a))); // asked to revoke now
        long revokeBy = now + REBALANCE_MS;

        now = revokeBy - 1;
        ok(beat("a", a.memberEpoch(), owned(a))); // still holding on: the deadline does not move
        ok(beat("b", 2, Set.of()));
        assertThat(coordinator.onDeadlines(now)).isZero();
        now = revokeBy;
        assertThat(coordinator.onDeadlines(now)).isEqualTo(1);

        assertThat(coordinator.heartbeat(beat("a", a.memberEpoch(), owned(a)), now).error())
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        ConsumerHeartbeatResult b = ok(beat("b", 2, Set.of()));
        assertThat(b.memberEpoch()).isEqualTo(3);
        assertThat(owned(b)).isEqualTo(parts(orders, 0, 1, 2, 3));
    }

    @Test
    void shouldForgetARevocationDeadlineOnceTheMemberHasRevoked() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(join("b", List.of("orders")));
        ConsumerHeartbeatResult asked = ok(beat("a", a.memberEpoch(), owned(a)));
        ok(beat("a", asked.memberEpoch(), owned(asked))); // revoked
        long start = now;

        // a goes on heartbeating past the deadline it had while revoking: it stays
        for (now = start + 5_000; now <= start + REBALANCE_MS + 10_000; now += 5_000) {
            ok(beat("a", 2, owned(asked)));
            ok(beat("b", 2, Set.of()));
            assertThat(coordinator.onDeadlines(now)).as("fenced at %d", now - start).isZero();
        }
        assertThat(coordinator.describe(GROUP).orElseThrow().members()).hasSize(2);
    }

    @Test
    void shouldLetALeavingMembersPartitionsGoToTheOthers() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ConsumerHeartbeatResult b = ok(join("b", List.of("orders")));
        ok(beat("a", a.memberEpoch(), owned(a)));
        ConsumerHeartbeatResult left = ok(beat("a", ConsumerHeartbeat.LEAVE_EPOCH, null));
        assertThat(left.memberEpoch()).isEqualTo(ConsumerHeartbeat.LEAVE_EPOCH);

        ConsumerHeartbeatResult b2 = ok(beat("b", b.memberEpoch(), Set.of()));
        assertThat(owned(b2)).isEqualTo(parts(orders, 0, 1, 2, 3));
        assertThat(b2.memberEpoch()).isEqualTo(3);
    }

    @Test
    void shouldKeepAStaticMembersPartitionsWhileItRestarts() {
        ConsumerHeartbeatResult a = ok(withInstance(join("a", List.of("orders")), "i-a"));
        ConsumerHeartbeatResult b = ok(withInstance(join("b", List.of("orders")), "i-b"));
        ConsumerHeartbeatResult revoke = ok(beat("a", a.memberEpoch(), owned(a)));
        ok(beat("a", revoke.memberEpoch(), owned(revoke)));
        ConsumerHeartbeatResult bs = ok(beat("b", b.memberEpoch(), Set.of()));
        Set<PartitionKey> bParts = owned(bs);
        assertThat(bParts).hasSize(2);
        int epoch = coordinator.describe(GROUP).orElseThrow().groupEpoch();

        // b leaves for a restart, and another process with the same instance id must wait
        ok(new ConsumerHeartbeat(GROUP, "b", ConsumerHeartbeat.LEAVE_STATIC_EPOCH, "i-b", null, -1, null, null, null,
                null, "client-b", "/127.0.0.1"));
        ConsumerHeartbeatResult back = ok(withInstance(join("b2", List.of("orders")), "i-b"));

        assertThat(owned(back)).isEqualTo(bParts);
        assertThat(coordinator.describe(GROUP).orElseThrow().groupEpoch()).isEqualTo(epoch);
        assertThat(coordinator.heartbeat(withInstance(join("b3", List.of("orders")), "i-b"), now).error())
                .isEqualTo(Errors.UNRELEASED_INSTANCE_ID);
    }

    private static ConsumerHeartbeat withInstance(ConsumerHeartbeat hb, String instanceId) {
        return new ConsumerHeartbeat(hb.groupId(), hb.memberId(), hb.memberEpoch(), instanceId, hb.rackId(),
                hb.rebalanceTimeoutMs(), hb.subscribedTopicNames(), hb.subscribedTopicRegex(), hb.serverAssignor(),
                hb.ownedPartitions(), hb.clientId(), hb.clientHost());
    }

    @Test
    void shouldFollowARegexSubscriptionToNewTopics() {
        topics.create("other", 2);
        ConsumerHeartbeatResult r = ok(new ConsumerHeartbeat(GROUP, "a", 0, null, null, REBALANCE_MS, null,
                "ord.*", null, Set.of(), "c", "h"));
        assertThat(owned(r)).isEqualTo(parts(orders, 0, 1, 2, 3));

        TopicInfo ordersEu = topics.create("orders-eu", 1);
        coordinator.onTopicsChanged();
        ConsumerHeartbeatResult r2 = ok(beat("a", r.memberEpoch(), owned(r)));
        Set<PartitionKey> expected = parts(orders, 0, 1, 2, 3);
        expected.addAll(parts(ordersEu, 0));
        assertThat(owned(r2)).isEqualTo(expected);
    }

    @Test
    void shouldRefuseBadRequestsWithKafkasCodes() {
        ConsumerHeartbeatResult badRegex = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "a", 0, null, null,
                REBALANCE_MS, null, "(unclosed", null, Set.of(), "c", "h"), now);
        assertThat(badRegex.error()).isEqualTo(Errors.INVALID_REGULAR_EXPRESSION);
        ConsumerHeartbeatResult badAssignor = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "a", 0, null, null,
                REBALANCE_MS, List.of("orders"), null, "sticky", Set.of(), "c", "h"), now);
        assertThat(badAssignor.error()).isEqualTo(Errors.UNSUPPORTED_ASSIGNOR);
        ConsumerHeartbeatResult noTimeout = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "a", 0, null, null, -1,
                List.of("orders"), null, null, Set.of(), "c", "h"), now);
        assertThat(noTimeout.error()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(noTimeout.errorMessage()).contains("RebalanceTimeoutMs");
        assertThat(coordinator.exists(GROUP)).isFalse();
    }

    @Test
    void shouldUseTheAssignorTheMembersAskFor() {
        ConsumerHeartbeatResult r = ok(new ConsumerHeartbeat(GROUP, "a", 0, null, null, REBALANCE_MS,
                List.of("orders"), null, "range", Set.of(), "c", "h"));
        assertThat(owned(r)).hasSize(4);
        assertThat(coordinator.describe(GROUP).orElseThrow().assignorName()).isEqualTo("range");
    }

    @Test
    void shouldCheckOffsetCommitsAgainstTheMembersEpoch() {
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        short v9 = 9;
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", a.memberEpoch(), v9)).isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", a.memberEpoch() + 1, v9))
                .isEqualTo(Errors.STALE_MEMBER_EPOCH); // newer than the coordinator's
        assertThat(coordinator.validateOffsetCommit(GROUP, "x", 1, v9)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.validateOffsetCommit(GROUP, "", -1, v9)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", a.memberEpoch(), (short) 8))
                .isEqualTo(Errors.UNSUPPORTED_VERSION);
        assertThat(coordinator.validateOffsetDelete(GROUP, "orders")).isEqualTo(Errors.GROUP_SUBSCRIBED_TO_TOPIC);
        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.NON_EMPTY_GROUP);

        ok(beat("a", ConsumerHeartbeat.LEAVE_EPOCH, null));
        assertThat(coordinator.validateOffsetCommit(GROUP, "", -1, v9)).isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetDelete(GROUP, "orders")).isEqualTo(Errors.NONE);
        assertThat(state()).isEqualTo(ConsumerGroupState.EMPTY);
        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.NONE);
        assertThat(coordinator.exists(GROUP)).isFalse();
    }

    @Test
    void shouldAcceptACommitFromAnOlderEpochOnlyForPartitionsHeldSinceThen() {
        // KIP-1251: a member commits with the epoch it knows, which may be older than the coordinator's
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(beat("a", 1, owned(a)));
        topics.grow("orders", 6);
        coordinator.onTopicsChanged();
        ConsumerHeartbeatResult grown = ok(beat("a", 1, owned(a)));
        assertThat(grown.memberEpoch()).isEqualTo(2);
        short v9 = 9;

        assertThat(coordinator.validateOffsetCommit(GROUP, "a", 1, v9)).isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetCommitPartition(GROUP, "a", 1, parts(orders, 0).iterator().next()))
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetCommitPartition(GROUP, "a", 1, parts(orders, 5).iterator().next()))
                .isEqualTo(Errors.STALE_MEMBER_EPOCH);
        assertThat(coordinator.validateOffsetCommitPartition(GROUP, "a", 2, parts(orders, 5).iterator().next()))
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", 3, v9)).isEqualTo(Errors.STALE_MEMBER_EPOCH);
    }

    @Test
    void shouldKeepEveryPartitionWithOneOwnerThroughChurn() {
        // Members join and leave in turn; at every step no partition is held by two members.
        topics.create("wide", 12);
        List<String> live = new ArrayList<>();
        Map<String, Integer> epochs = new java.util.HashMap<>();
        Map<String, Set<PartitionKey>> held = new java.util.HashMap<>();
        for (int step = 0; step < 40; step++) {
            if (step % 5 == 4 && !live.isEmpty()) {
                String gone = live.remove(0);
                ok(new ConsumerHeartbeat(GROUP, gone, -1, null, null, -1, null, null, null, null, "c", "h"));
                held.remove(gone);
            } else if (live.size() < 5) {
                String m = "m" + step;
                live.add(m);
                ConsumerHeartbeatResult r = ok(join(m, List.of("wide")));
                epochs.put(m, r.memberEpoch());
                held.put(m, owned(r));
            }
            for (String m : live) {
                ConsumerHeartbeatResult r = ok(beat(m, epochs.get(m), held.get(m)));
                epochs.put(m, r.memberEpoch());
                if (r.assignment() != null) {
                    held.put(m, owned(r));
                }
                Set<PartitionKey> seen = new HashSet<>();
                for (Set<PartitionKey> ps : held.values()) {
                    for (PartitionKey p : ps) {
                        assertThat(seen.add(p)).as("partition %s held twice at step %d", p, step).isTrue();
                    }
                }
            }
        }
    }

    @Test
    void shouldCountEveryGroupEpochBumpAndKeepTheCountWhenTheGroupIsDeleted() {
        // Given a member at epoch 1, and heartbeats that change nothing
        ConsumerHeartbeatResult a = ok(join("a", List.of("orders")));
        ok(beat("a", a.memberEpoch(), owned(a)));
        assertThat(coordinator.rebalances()).isEqualTo(1);

        // When a second member joins, the topic grows and both leave
        ok(join("b", List.of("orders")));
        assertThat(coordinator.rebalances()).isEqualTo(2);
        topics.grow("orders", 6);
        coordinator.onTopicsChanged();
        assertThat(coordinator.describe(GROUP).orElseThrow().groupEpoch()).isEqualTo(3);
        assertThat(coordinator.rebalances()).isEqualTo(3);
        ok(beat("a", ConsumerHeartbeat.LEAVE_EPOCH, null));
        ok(beat("b", ConsumerHeartbeat.LEAVE_EPOCH, null));
        assertThat(coordinator.rebalances()).isEqualTo(5);

        // Then deleting the Empty group keeps the count, and a new group of the same id adds to it
        assertThat(coordinator.deleteGroup(GROUP)).isEqualTo(Errors.NONE);
        assertThat(coordinator.rebalances()).isEqualTo(5);
        ok(join("c", List.of("orders")));
        assertThat(coordinator.rebalances()).isEqualTo(6);
    }
}
