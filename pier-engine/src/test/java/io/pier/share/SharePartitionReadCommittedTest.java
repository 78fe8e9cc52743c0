package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.log.AbortedTransaction;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * Acquisition under {@code share.isolation.level=read_committed} (KIP-932): only below the last
 * stable offset, records of aborted transactions archived without a delivery, markers archived at
 * both levels. Pure: the log is a list of batch bounds, time is a number.
 */
class SharePartitionReadCommittedTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long P1 = 1_000L;
    private static final long P2 = 2_000L;
    private static final AcquireLimits LIMITS = new AcquireLimits(100, 500, AcquireMode.BATCH_OPTIMIZED);

    private final CountingEvents events = new CountingEvents();
    private final ShareConfig config = new ShareConfig(1_000, 5, 200, true);
    private SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config, events);

    private static AcquiredRange range(long first, long last, int count) {
        return new AcquiredRange(first, last, (short) count);
    }

    private static LogBatch marker(long offset, long producerId) {
        return new LogBatch(offset, offset, true, producerId, true);
    }

    /** 0..9 P1 (aborted), 10..19 P2 (committed), 20 P1 ABORT, 21 P2 COMMIT, 22..24 plain data. */
    private static List<LogBatch> interleavedLog() {
        return List.of(
                LogBatch.transactional(0, 9, P1),
                LogBatch.transactional(10, 19, P2),
                marker(20, P1),
                marker(21, P2),
                new LogBatch(22, 24));
    }

    private static final List<AbortedTransaction> P1_ABORTED = List.of(new AbortedTransaction(P1, 0, 20));

    @Test
    void shouldArchiveAbortedRecordsAndAcquireTheCommittedOnes() {
        List<AcquiredRange> got = sp.acquire("m1", 0, interleavedLog(), LIMITS,
                Isolation.readCommitted(25, P1_ABORTED), 0);

        assertThat(got).containsExactly(range(10, 19, 1), range(22, 24, 1));
        assertThat(sp.startOffset()).as("the start offset moves over the aborted records").isEqualTo(10);
        assertThat(sp.stateOf(21)).as("a marker is archived").isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.recordCount(RecordState.ACQUIRED)).isEqualTo(13);
        assertThat(events.acquired).as("aborted records are not deliveries").isEqualTo(13);
        assertThat(sp.nextFetchOffset()).isEqualTo(25);
    }

    @Test
    void shouldDeliverAbortedRecordsButNotMarkersUnderReadUncommitted() {
        List<AcquiredRange> got = sp.acquire("m1", 0, interleavedLog(), LIMITS, Isolation.READ_UNCOMMITTED, 0);

        assertThat(got).containsExactly(range(0, 19, 1), range(22, 24, 1));
        assertThat(sp.stateOf(20)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.stateOf(21)).isEqualTo(RecordState.ARCHIVED);
        assertThat(events.acquired).isEqualTo(23);
    }

    @Test
    void shouldKeepTheRecordsOfOtherProducersAndOutsideTransactions() {
        // Inside P1's aborted span: a committed batch of P2 and an idempotent (non-transactional) one of P1.
        List<LogBatch> read = List.of(
                LogBatch.transactional(0, 1, P1),
                LogBatch.transactional(2, 3, P2),
                new LogBatch(4, 5, false, P1, false),
                LogBatch.transactional(6, 7, P1),
                marker(8, P1),
                LogBatch.transactional(9, 10, P1));

        List<AcquiredRange> got = sp.acquire("m1", 0, read, LIMITS,
                Isolation.readCommitted(11, List.of(new AbortedTransaction(P1, 0, 8))), 0);

        assertThat(got).as("P1's batch after its ABORT marker belongs to a later transaction")
                .containsExactly(range(2, 5, 1), range(9, 10, 1));
        assertThat(sp.startOffset()).isEqualTo(2);
        assertThat(sp.stateOf(6)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.deliveryCountOf(6)).isZero();
        assertThat(sp.stateOf(8)).isEqualTo(RecordState.ARCHIVED);
    }

    @Test
    void shouldAcquireNothingAtOrPastTheLastStableOffset() {
        // 0..4 plain data, 5..9 an open transaction of P1 (the last stable offset is 5).
        List<LogBatch> open = List.of(new LogBatch(0, 4), LogBatch.transactional(5, 9, P1));

        assertThat(sp.acquire("m1", 0, open, LIMITS, Isolation.readCommitted(5, List.of()), 0))
                .containsExactly(range(0, 4, 1));
        assertThat(sp.nextFetchOffset()).isEqualTo(5);
        assertThat(sp.endOffset()).as("nothing of the open transaction is taken in").isEqualTo(4);
        assertThat(sp.hasAcquirableWork(5)).isFalse();

        List<LogBatch> fromFive = List.of(LogBatch.transactional(5, 9, P1));
        assertThat(sp.acquire("m2", 5, fromFive, LIMITS, Isolation.readCommitted(5, List.of()), 1)).isEmpty();
        assertThat(sp.stateOf(5)).isNull();
        assertThat(sp.nextFetchOffset()).isEqualTo(5);

        // The COMMIT marker at 10 is written: the last stable offset moves to 11.
        List<LogBatch> committed = List.of(LogBatch.transactional(5, 9, P1), marker(10, P1));
        assertThat(sp.hasAcquirableWork(11)).isTrue();
        assertThat(sp.acquire("m2", 5, committed, LIMITS, Isolation.readCommitted(11, List.of()), 2))
                .containsExactly(range(5, 9, 1));
        assertThat(sp.stateOf(10)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.nextFetchOffset()).isEqualTo(11);
    }

    @Test
    void shouldAdvanceTheStartOffsetOverAbortedRecordsOnceEarlierRecordsSettle() {
        sp.acquire("m1", 0, List.of(new LogBatch(0, 2)), LIMITS, Isolation.readCommitted(3, List.of()), 0);
        List<LogBatch> read = List.of(LogBatch.transactional(3, 7, P1), marker(8, P1), new LogBatch(9, 10));

        List<AcquiredRange> got = sp.acquire("m2", 3, read, LIMITS,
                Isolation.readCommitted(11, List.of(new AbortedTransaction(P1, 3, 8))), 1);

        assertThat(got).containsExactly(range(9, 10, 1));
        assertThat(sp.startOffset()).isZero();
        assertThat(sp.stateOf(3)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.deliveryCountOf(3)).isZero();

        AckResult acked = sp.acknowledge("m1", List.of(AckBatch.of(0, 2, AcknowledgeType.ACCEPT)), 2);
        sp.commit(acked.pending());

        assertThat(sp.startOffset()).isEqualTo(9);
    }

    @Test
    void shouldNotSpendTheBudgetOnAbortedRecords() {
        List<LogBatch> read = List.of(LogBatch.transactional(0, 99, P1), marker(100, P1), new LogBatch(101, 110));
        AcquireLimits five = new AcquireLimits(5, 500, AcquireMode.RECORD_LIMIT);

        List<AcquiredRange> got = sp.acquire("m1", 0, read, five,
                Isolation.readCommitted(111, List.of(new AbortedTransaction(P1, 0, 100))), 0);

        assertThat(got).containsExactly(range(101, 105, 1));
        assertThat(sp.startOffset()).isEqualTo(101);
    }

    @Test
    void shouldArchiveAbortedRecordsTheWindowAlreadyHolds() {
        // After a restart: 5..6 acknowledged, so 0..4 come back AVAILABLE; they were an aborted transaction.
        sp = SharePartition.load(KEY, new ShareState(0, 0, List.of(
                new PersistedBatch(5, 6, PersistedBatch.ACKNOWLEDGED, (short) 1))), () -> config, events, 0);
        List<LogBatch> read = List.of(LogBatch.transactional(0, 4, P1), new LogBatch(5, 6), marker(7, P1),
                new LogBatch(8, 9));

        List<AcquiredRange> got = sp.acquire("m1", 0, read, LIMITS,
                Isolation.readCommitted(10, List.of(new AbortedTransaction(P1, 0, 7))), 0);

        assertThat(got).containsExactly(range(8, 9, 1));
        assertThat(sp.startOffset()).isEqualTo(8);
        assertThat(events.acquired).isEqualTo(2);
    }

    @Test
    void shouldMovePastAReadOfOnlyAbortedRecordsAndMarkers() {
        List<LogBatch> read = List.of(LogBatch.transactional(0, 3, P1), marker(4, P1));

        assertThat(sp.acquire("m1", 0, read, LIMITS,
                Isolation.readCommitted(5, List.of(new AbortedTransaction(P1, 0, 4))), 0)).isEmpty();

        assertThat(sp.startOffset()).isEqualTo(5);
        assertThat(sp.inFlightRecords()).isZero();
        assertThat(events.acquired).isZero();
    }

    private static final class CountingEvents implements ShareEvents {
        int acquired;

        @Override
        public void onAcquired(int deliveryCount) {
            acquired++;
        }
    }
}
