package io.pier.share;

import static io.pier.share.AcknowledgeType.RELEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateWrite;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** Release backoff: a released record waits before it is acquired again; the others flow meanwhile. */
class SharePartitionBackoffTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long LOCK_MS = 1_000;

    private ShareConfig config = withBackoff(new ReleaseBackoff(100, 2.0, 300, false));
    private final TestLog log = TestLog.ofBatchSizes(1, 1, 1, 1, 1);
    private SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config);

    private static ShareConfig withBackoff(ReleaseBackoff backoff) {
        return new ShareConfig(LOCK_MS, 10, 100, true, false, backoff);
    }

    private List<AcquiredRange> fetch(int maxRecords, long nowMs) {
        sp.expireLocks(nowMs);
        long from = sp.nextFetchOffset();
        return sp.acquire("m1", from, log.read(from), new AcquireLimits(maxRecords, 500, AcquireMode.RECORD_LIMIT),
                nowMs);
    }

    private ShareStateWrite release(long offset, long nowMs) {
        AckResult r = sp.acknowledge("m1", List.of(AckBatch.of(offset, offset, RELEASE)), nowMs);
        assertThat(r.isError()).isFalse();
        sp.commit(r.pending());
        return r.pending().write().orElseThrow();
    }

    @Test
    void shouldHoldAReleasedRecordBackWhileLaterRecordsFlow() {
        assertThat(fetch(1, 0)).containsExactly(new AcquiredRange(0, 0, (short) 1));
        ShareStateWrite written = release(0, 10);

        assertThat(written.batches()).containsExactly(
                new PersistedBatch(0, 0, PersistedBatch.AVAILABLE, (short) 1, 110));
        assertThat(sp.recordsInBackoff()).isEqualTo(1);
        assertThat(sp.nextDeadlineMs()).isEqualTo(110);
        assertThat(fetch(1, 50)).as("the next record instead").containsExactly(new AcquiredRange(1, 1, (short) 1));
        assertThat(fetch(1, 109)).containsExactly(new AcquiredRange(2, 2, (short) 1));

        assertThat(fetch(1, 110)).as("due").containsExactly(new AcquiredRange(0, 0, (short) 2));
        assertThat(sp.recordsInBackoff()).isZero();
    }

    @Test
    void shouldGrowTheDelayPerDeliveryUpToTheMaximum() {
        long now = 0;
        long[] expectedDelays = {100, 200, 300, 300};
        for (long expected : expectedDelays) {
            assertThat(fetch(1, now)).hasSize(1).allSatisfy(r -> assertThat(r.firstOffset()).isZero());
            ShareStateWrite w = release(0, now);
            assertThat(w.batches().get(0).notBeforeMs()).isEqualTo(now + expected);
            assertThat(sp.nextFetchOffset()).as("nothing else is cached").isEqualTo(1);
            now += expected;
            sp.expireLocks(now);
        }
    }

    @Test
    void shouldWakeFetchesWhenABackoffEnds() {
        fetch(1, 0);
        release(0, 0);
        sp.consumeStateChanged();
        sp.expireLocks(99);
        assertThat(sp.consumeStateChanged()).isFalse();
        sp.expireLocks(100);
        assertThat(sp.consumeStateChanged()).isTrue();
    }

    @Test
    void shouldOnlyDelayExpiredLocksWhenAskedTo() {
        fetch(1, 0);
        assertThat(sp.expireLocks(LOCK_MS).orElseThrow().batches().get(0).hasBackoff()).isFalse();
        assertThat(sp.recordsInBackoff()).isZero();

        config = withBackoff(new ReleaseBackoff(100, 2.0, 300, true));
        fetch(1, 2 * LOCK_MS);
        ShareStateWrite expired = sp.expireLocks(3 * LOCK_MS).orElseThrow();
        assertThat(expired.batches().get(0).notBeforeMs()).isEqualTo(3 * LOCK_MS + 200);
        assertThat(sp.recordsInBackoff()).isEqualTo(1);
    }

    @Test
    void shouldKeepTheBackoffOfALoadedRecordAndForgetOneAlreadyOver() {
        ShareState stored = new ShareState(0, 0, List.of(
                new PersistedBatch(0, 0, PersistedBatch.AVAILABLE, (short) 1, 500),
                new PersistedBatch(1, 1, PersistedBatch.AVAILABLE, (short) 1, 50)));
        sp = SharePartition.load(KEY, stored, () -> config, ShareEvents.NONE, 100);

        assertThat(sp.recordsInBackoff()).isEqualTo(1);
        assertThat(fetch(5, 100)).as("offset 1's backoff is over")
                .containsExactly(new AcquiredRange(1, 1, (short) 2), new AcquiredRange(2, 4, (short) 1));
        assertThat(fetch(5, 500)).containsExactly(new AcquiredRange(0, 0, (short) 2));
    }

    @Test
    void shouldNotDelayWhenOff() {
        config = withBackoff(ReleaseBackoff.NONE);
        fetch(1, 0);
        assertThat(release(0, 0).batches().get(0).hasBackoff()).isFalse();
        assertThat(fetch(1, 0)).containsExactly(new AcquiredRange(0, 0, (short) 2));
    }
}
