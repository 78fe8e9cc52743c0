package io.pier.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.ClassicGroupHandover;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicMemberState;
import io.pier.group.ClassicProtocol;
import io.pier.group.ClassicSync;
import io.pier.group.ClassicSyncResult;
import io.pier.group.FakeTopics;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Classic members inside a consumer-protocol group (online migration), driven by hand. */
class ClassicMembersTest {
    private static final String GROUP = "g";
    private final FakeTopics topics = new FakeTopics();
    private ConsumerGroupCoordinator coordinator;
    private final long now = 1_000;

    @BeforeEach
    void setUp() {
        coordinator = new ConsumerGroupCoordinator(ConsumerGroupBrokerConfig.DEFAULTS, topics, () -> "generated");
        topics.create("t", 4);
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static List<ClassicProtocol> protocols(List<TopicPartition> owned) {
        return List.of(new ClassicProtocol("cooperative-sticky", bytes(ConsumerProtocol.serializeSubscription(
                new ConsumerPartitionAssignor.Subscription(List.of("t"), null, owned)))));
    }

    private static byte[] assignment(TopicPartition... partitions) {
        return bytes(ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(List.of(partitions))));
    }

    private static List<TopicPartition> decode(ClassicSyncResult r) {
        return ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(r.assignment())).partitions();
    }

    private static ClassicJoin join(String member, List<TopicPartition> owned) {
        return new ClassicJoin(GROUP, member, null, "client-" + member, "/127.0.0.1", 10_000, 30_000, "consumer",
                protocols(owned), true, true);
    }

    private ClassicSyncResult sync(String member, int generation) {
        return coordinator.classicSync(new ClassicSync(GROUP, generation, member, null, "consumer",
                "cooperative-sticky", Map.of()), now);
    }

    /** Two classic members holding two partitions each, taken over at generation 5. */
    private void adoptTwo() {
        TopicPartition t0 = new TopicPartition("t", 0);
        TopicPartition t1 = new TopicPartition("t", 1);
        TopicPartition t2 = new TopicPartition("t", 2);
        TopicPartition t3 = new TopicPartition("t", 3);
        coordinator.adoptClassic(GROUP, new ClassicGroupHandover(5, List.of(
                new ClassicMemberState("a", null, "client-a", "/127.0.0.1", 30_000, 10_000,
                        protocols(List.of(t0, t1)), assignment(t0, t1)),
                new ClassicMemberState("b", null, "client-b", "/127.0.0.1", 30_000, 10_000,
                        protocols(List.of(t2, t3)), assignment(t2, t3)))), now);
    }

    @Test
    void shouldKeepTheClassicMembersPartitionsAtTheirGenerationAfterATakeover() {
        adoptTwo();

        assertThat(coordinator.classicHeartbeat(GROUP, "a", null, 5, now)).isEqualTo(Errors.NONE);
        assertThat(decode(sync("a", 5))).containsExactly(new TopicPartition("t", 0), new TopicPartition("t", 1));
        assertThat(coordinator.classicHeartbeat(GROUP, "a", null, 4, now)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(sync("a", 6).error()).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(coordinator.classicHeartbeat(GROUP, "x", null, 5, now)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", 5, (short) 8)).isEqualTo(Errors.NONE);
        assertThat(coordinator.validateOffsetCommit(GROUP, "a", 4, (short) 8)).isEqualTo(Errors.ILLEGAL_GENERATION);
    }

    @Test
    void shouldMakeAClassicMemberRevokeThroughARejoinBeforeTheNewMemberGetsItsPartition() {
        adoptTwo();
        ConsumerHeartbeatResult n = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "n", 0, null, null, 30_000,
                List.of("t"), null, null, Set.of(), "client-n", "/127.0.0.1"), now);
        assertThat(n.error()).isEqualTo(Errors.NONE);
        assertThat(n.memberEpoch()).isEqualTo(6);

        // A classic member hears of the rebalance through its heartbeat and rejoins with what it owns
        String giver = null;
        for (String m : List.of("a", "b")) {
            assertThat(coordinator.classicHeartbeat(GROUP, m, null, 5, now)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
            // A SyncGroup of the old generation is refused until it rejoins
            assertThat(sync(m, 5).error()).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
            List<TopicPartition> owned = m.equals("a")
                    ? List.of(new TopicPartition("t", 0), new TopicPartition("t", 1))
                    : List.of(new TopicPartition("t", 2), new TopicPartition("t", 3));
            ClassicJoinResult joined = coordinator.classicJoin(join(m, owned), "unused", now);
            assertThat(joined.error()).isEqualTo(Errors.NONE);
            assertThat(joined.leaderId()).isEmpty();
            List<TopicPartition> kept = decode(sync(m, joined.generationId()));
            if (kept.size() < owned.size()) {
                giver = m;
                assertThat(joined.generationId()).as("epoch kept while revoking").isEqualTo(5);
                // It revoked what it lost and rejoins: now it is at the new epoch
                ClassicJoinResult again = coordinator.classicJoin(join(m, kept), "unused", now);
                assertThat(again.generationId()).isEqualTo(6);
                assertThat(decode(sync(m, 6))).isEqualTo(kept);
            }
        }
        assertThat(giver).isNotNull();
        // And the new member gets the freed partition on its next heartbeat
        ConsumerHeartbeatResult n2 = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "n", 6, null, null, -1, null,
                null, null, Set.of(), "client-n", "/127.0.0.1"), now);
        assertThat(n2.assignment()).isNotNull();
        assertThat(n2.assignment().values().iterator().next()).hasSize(1);
    }

    @Test
    void shouldHandTheGroupBackWhenTheLastConsumerProtocolMemberLeaves() {
        adoptTwo();
        ConsumerHeartbeatResult n = coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "n", 0, null, null, 30_000,
                List.of("t"), null, null, Set.of(), "client-n", "/127.0.0.1"), now);
        assertThat(coordinator.takeDowngrades()).isEmpty();
        coordinator.heartbeat(new ConsumerHeartbeat(GROUP, "n", -1, null, null, -1, null, null, null, null, "c", "h"),
                now);

        assertThat(coordinator.takeDowngrades()).containsExactly(GROUP);
        ClassicGroupHandover back = coordinator.handOverToClassic(GROUP);
        assertThat(back.generationId()).isGreaterThan(n.memberEpoch());
        assertThat(back.members()).extracting(ClassicMemberState::memberId).containsExactlyInAnyOrder("a", "b");
        assertThat(coordinator.exists(GROUP)).isFalse();
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldLetClassicMembersLeaveByIdOrFenceAWrongInstance() {
        adoptTwo();
        ClassicLeave.Result r = coordinator.classicLeave(GROUP, List.of(new ClassicLeave.Member("a", null),
                new ClassicLeave.Member("nobody", null)));
        assertThat(r.members()).extracting(ClassicLeave.MemberResult::error)
                .containsExactly(Errors.NONE, Errors.UNKNOWN_MEMBER_ID);
        assertThat(coordinator.describe(GROUP).orElseThrow().members()).extracting(m -> m.memberId())
                .containsExactly("b");
    }
}
