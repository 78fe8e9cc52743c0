package io.pier.share;

import static io.pier.share.AcknowledgeType.ACCEPT;
import static io.pier.share.AcknowledgeType.GAP;
import static io.pier.share.AcknowledgeType.REJECT;
import static io.pier.share.AcknowledgeType.RELEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** What a share-partition tells its {@link ShareEvents} listener, driven by a fake clock. */
class ShareEventsTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long LOCK_MS = 1_000;

    private final ShareConfig config = new ShareConfig(LOCK_MS, 3, 100, true);
    private final TestLog log = TestLog.ofBatchSizes(1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    private final Recorder events = new Recorder();
    private final SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config, events);

    /** Every call, as "name:deliveryCount" or "archived:CAUSE:records". */
    private static final class Recorder implements ShareEvents {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onAcquired(int deliveryCount) {
            calls.add("acquired:" + deliveryCount);
        }

        @Override
        public void onAccepted(int deliveryCount) {
            calls.add("accepted:" + deliveryCount);
        }

        @Override
        public void onRejected(int deliveryCount) {
            calls.add("rejected:" + deliveryCount);
        }

        @Override
        public void onReleased(int deliveryCount) {
            calls.add("released:" + deliveryCount);
        }

        @Override
        public void onLockExpired(int deliveryCount) {
            calls.add("expired:" + deliveryCount);
        }

        @Override
        public void onMemberReleased(int deliveryCount) {
            calls.add("memberReleased:" + deliveryCount);
        }

        @Override
        public void onArchived(ArchiveCause cause, long records) {
            calls.add("archived:" + cause + ":" + records);
        }

        List<String> drain() {
            List<String> out = new ArrayList<>(calls);
            calls.clear();
            return out;
        }
    }

    private List<AcquiredRange> fetch(String member, int maxRecords, long nowMs) {
        long from = sp.nextFetchOffset();
        return sp.acquire(member, from, log.read(from), new AcquireLimits(maxRecords, 1, AcquireMode.RECORD_LIMIT),
                nowMs);
    }

    private void ack(String member, long offset, AcknowledgeType type, long nowMs) {
        AckResult r = sp.acknowledge(member, List.of(AckBatch.of(offset, offset, type)), nowMs);
        assertThat(r.isError()).as("ack error %s", r.error()).isFalse();
        sp.commit(r.pending());
    }

    @Test
    void shouldTellAcquireAcceptRejectAndReleaseWithDeliveryCounts() {
        fetch("m1", 3, 0);
        assertThat(events.drain()).containsExactly("acquired:1", "acquired:1", "acquired:1");

        ack("m1", 0, ACCEPT, 1);
        ack("m1", 1, REJECT, 1);
        ack("m1", 2, RELEASE, 1);

        assertThat(events.drain()).containsExactly(
                "accepted:1", "rejected:1", "archived:REJECTED:1", "released:1");
    }

    @Test
    void shouldTellArchiveByDeliveryLimitOnTheLastRelease() {
        for (int delivery = 1; delivery <= 3; delivery++) {
            assertThat(fetch("m1", 1, delivery)).hasSize(1);
            ack("m1", 0, RELEASE, delivery);
        }

        assertThat(events.drain()).containsExactly("acquired:1", "released:1", "acquired:2", "released:2",
                "acquired:3", "released:3", "archived:DELIVERY_LIMIT:1");
    }

    @Test
    void shouldTellLockExpiryAndArchiveWhenTheLastLockExpires() {
        long now = 0;
        for (int delivery = 1; delivery <= 3; delivery++) {
            assertThat(fetch("m1", 1, now)).hasSize(1);
            now += LOCK_MS;
            sp.expireLocks(now);
        }

        assertThat(events.drain()).containsExactly("acquired:1", "expired:1", "acquired:2", "expired:2",
                "acquired:3", "expired:3", "archived:DELIVERY_LIMIT:1");
    }

    @Test
    void shouldTellMemberReleaseOnlyWhenItCommits() {
        fetch("m1", 2, 0);
        events.drain();

        PendingChange change = sp.releaseMember("m1", 1).orElseThrow();
        assertThat(events.drain()).isEmpty();
        sp.commit(change);

        assertThat(events.drain()).containsExactly("memberReleased:1", "memberReleased:1");
    }

    @Test
    void shouldTellNothingForARolledBackAcknowledgement() {
        fetch("m1", 1, 0);
        events.drain();

        sp.rollback(sp.acknowledge("m1", List.of(AckBatch.of(0, 0, ACCEPT)), 1).pending());

        assertThat(events.drain()).isEmpty();
        assertThat(sp.recordCount(RecordState.ACQUIRED)).isEqualTo(1);
    }

    @Test
    void shouldNotCountGapsAsRecords() {
        fetch("m1", 1, 0);
        events.drain();

        ack("m1", 0, GAP, 1);

        assertThat(events.drain()).isEmpty();
    }

    @Test
    void shouldTellUnsettledRecordsLostToTheLogStartInsideAndPastTheWindow() {
        fetch("m1", 4, 0);
        ack("m1", 0, ACCEPT, 1);
        ack("m1", 2, ACCEPT, 1);
        ack("m1", 1, ACCEPT, 1);
        events.drain();
        // Window is now [3]: offset 3 ACQUIRED. Log start moves to 6: 3, 4 and 5 are lost.

        sp.onLogStartOffsetMoved(6);

        assertThat(events.drain()).containsExactly("archived:LOG_START:3");
    }

    @Test
    void shouldReportTheAgeOfTheOldestUnsettledRecord() {
        assertThat(sp.oldestUnsettledAgeMs(50)).isZero();
        fetch("m1", 1, 100);
        fetch("m1", 1, 300);

        assertThat(sp.oldestUnsettledAgeMs(400)).isEqualTo(300);
        ack("m1", 0, ACCEPT, 400);
        assertThat(sp.oldestUnsettledAgeMs(400)).isEqualTo(100);
        ack("m1", 1, REJECT, 400);
        assertThat(sp.oldestUnsettledAgeMs(400)).isZero();
    }

    @Test
    void shouldCountLoadedRecordsFromTheLoadTime() {
        ShareState stored = new ShareState(0, 5, List.of(
                new PersistedBatch(5, 6, PersistedBatch.AVAILABLE, (short) 1)));
        SharePartition loaded = SharePartition.load(KEY, stored, () -> config, events, 1_000);

        assertThat(loaded.oldestUnsettledAgeMs(1_250)).isEqualTo(250);
    }

    @Test
    void shouldCountAcquiredRecordsByMember() {
        fetch("m1", 2, 0);
        fetch("m2", 1, 0);

        assertThat(sp.acquiredByMember()).isEqualTo(Map.of("m1", 2, "m2", 1));
        ack("m1", 0, ACCEPT, 1);
        assertThat(sp.acquiredByMember()).isEqualTo(Map.of("m1", 1, "m2", 1));
    }

    @Test
    void shouldCountEveryRunOfAMembersRecordsWhateverStringItsRequestsCarried() {
        // Given m1's records before and after m2's, from requests with distinct member-id strings,
        // and a settled record inside m1's first run
        fetch(new String("m1"), 3, 0);
        fetch("m2", 2, 0);
        fetch(new String("m1"), 2, 0);
        ack("m1", 1, ACCEPT, 1);

        // Then each member's runs add up
        assertThat(sp.acquiredByMember()).isEqualTo(Map.of("m1", 4, "m2", 2));
    }
}
