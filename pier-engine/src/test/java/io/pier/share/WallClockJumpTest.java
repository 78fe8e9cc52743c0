package io.pier.share;

import static io.pier.share.AcknowledgeType.ACCEPT;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.JumpingClock;
import io.pier.group.FakeTopics;
import io.pier.group.HeartbeatRequest;
import io.pier.group.HeartbeatResponse;
import io.pier.group.MemberKey;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.group.ShareGroupCoordinator;
import io.pier.state.SharePartitionKey;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scenario S25 of the reliability reference, in the engine: the host's wall clock steps an hour
 * forwards or backwards while records are locked and members are in session. The share engine
 * reads no clock; every deadline comes from the {@code nowMs} its caller hands it, and the
 * broker's duty cycle hands it {@link io.pier.common.Clock#monoMs()}. Driven the same way here,
 * from a clock whose wall time steps between acquisition and expiry, an acquisition lock and a
 * share-group member's session each end exactly at their monotonic deadline: not an hour early
 * after a step forwards, not an hour late after a step backwards. That the broker does hand its
 * share-partitions and coordinators monotonic time is shown end to end by WallClockJumpIT in
 * pier-testkit.
 */
class WallClockJumpTest {
    private static final long HOUR_MS = 3_600_000;
    private static final long LOCK_MS = 30_000;
    /** group.share.session.timeout.ms, the default. */
    private static final long SESSION_MS = 45_000;
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final String GROUP = "orders-workers";

    private final JumpingClock clock = new JumpingClock(1_700_000_000_000L);
    private final TestLog log = TestLog.ofBatchSizes(10);
    private final SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> new ShareConfig(LOCK_MS, 5, 100, true));

    @ParameterizedTest(name = "wall clock stepped {0} ms")
    @ValueSource(longs = {HOUR_MS, -HOUR_MS})
    void shouldExpireAnAcquisitionLockExactlyAtItsMonotonicDeadlineWhateverTheWallClockDoes(long step) {
        // Given ten records locked to m1 for 30 s
        long acquiredAt = clock.monoMs();
        assertThat(fetch("m1")).containsExactly(new AcquiredRange(0, 9, (short) 1));
        assertThat(sp.nextDeadlineMs()).isEqualTo(acquiredAt + LOCK_MS);

        // When the wall clock steps an hour, and 30 s less 1 ms pass
        clock.stepWall(step);
        clock.advance(LOCK_MS - 1);

        // Then the lock holds: nothing expires, m2 gets nothing, m1's ACCEPT of half of them counts
        assertThat(sp.nextDeadlineMs()).as("deadline, unmoved by the step").isEqualTo(acquiredAt + LOCK_MS);
        assertThat(sp.expireLocks(clock.monoMs())).isEmpty();
        assertThat(fetch("m2")).isEmpty();
        assertThat(ack("m1", 0, 4)).isEqualTo(Errors.NONE);

        // ... and 1 ms later it ends: the rest go to m2, and m1's late ACCEPT is refused
        clock.advance(1);
        assertThat(sp.expireLocks(clock.monoMs())).isPresent();
        assertThat(ack("m1", 5, 9)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(fetch("m2")).containsExactly(new AcquiredRange(5, 9, (short) 2));
        assertThat(sp.stateOf(3)).as("accepted before the deadline").isNull();
        assertThat(sp.startOffset()).isEqualTo(5);
    }

    @ParameterizedTest(name = "wall clock stepped {0} ms")
    @ValueSource(longs = {HOUR_MS, -HOUR_MS})
    void shouldExpireAMembersSessionExactlyAtItsMonotonicDeadlineWhateverTheWallClockDoes(long step) {
        FakeTopics topics = new FakeTopics();
        topics.create("orders", 1);
        ShareGroupCoordinator coordinator = new ShareGroupCoordinator(ShareGroupBrokerConfig.DEFAULTS, topics);
        // Given m1 and m2 in session, m2 heartbeating once more 10 s later
        HeartbeatResponse joined = heartbeat(coordinator, "m1", 0);
        int epoch = heartbeat(coordinator, "m2", 0).memberEpoch();
        long m1Deadline = clock.monoMs() + SESSION_MS;
        assertThat(joined.error()).isEqualTo(Errors.NONE);

        // When the wall clock steps an hour as m2 heartbeats, and time passes up to 1 ms before m1's deadline
        clock.advance(10_000);
        clock.stepWall(step);
        assertThat(heartbeat(coordinator, "m2", epoch).error()).isEqualTo(Errors.NONE);
        long m2Deadline = clock.monoMs() + SESSION_MS;
        clock.advance(m1Deadline - 1 - clock.monoMs());

        // Then nobody has expired; at m1's deadline m1 does, m2 at its own
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(m1Deadline);
        assertThat(coordinator.expireSessions(clock.monoMs())).isEmpty();
        clock.advance(1);
        assertThat(coordinator.expireSessions(clock.monoMs())).containsExactly(new MemberKey(GROUP, "m1"));
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(m2Deadline);
        clock.advance(m2Deadline - 1 - clock.monoMs());
        assertThat(coordinator.expireSessions(clock.monoMs())).isEmpty();
        clock.advance(1);
        assertThat(coordinator.expireSessions(clock.monoMs())).containsExactly(new MemberKey(GROUP, "m2"));
    }

    private List<AcquiredRange> fetch(String member) {
        long from = sp.nextFetchOffset();
        return sp.acquire(member, from, log.read(from), new AcquireLimits(10, 500, AcquireMode.BATCH_OPTIMIZED),
                clock.monoMs());
    }

    private Errors ack(String member, long first, long last) {
        AckResult r = sp.acknowledge(member, List.of(AckBatch.of(first, last, ACCEPT)), clock.monoMs());
        if (r.isError()) {
            return r.error();
        }
        sp.commit(r.pending());
        return Errors.NONE;
    }

    private HeartbeatResponse heartbeat(ShareGroupCoordinator coordinator, String member, int epoch) {
        return coordinator.heartbeat(new HeartbeatRequest(GROUP, member, epoch, null,
                epoch == 0 ? List.of("orders") : null, "client", "/127.0.0.1"), clock.monoMs());
    }
}
