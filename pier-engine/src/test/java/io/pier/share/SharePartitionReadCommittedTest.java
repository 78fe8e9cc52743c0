package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.log.AbortedTransaction;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
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

    @Test
    void shouldDeliverEachCommittedRecordAndNothingElseOnRandomLogs() {
        for (int seed = 0; seed < 100; seed++) {
            try {
                new RandomRun(seed).run();
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("failed for seed " + seed + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * A random log of plain batches and interleaved transactions of three producers, its end moving
     * forward while members acquire, accept, release or let locks expire: no acquired offset is a
     * marker, aborted or at/after the last stable offset of the moment, and in the end every
     * committed record was accepted exactly once and the start offset reached the log end.
     */
    private static final class RandomRun {
        final Random random;
        final List<LogBatch> log = new ArrayList<>();
        final List<AbortedTransaction> aborted = new ArrayList<>();
        /** Per transaction: first offset, marker offset. */
        final List<long[]> transactions = new ArrayList<>();
        final Set<Long> deliverable = new HashSet<>();
        final Set<Long> accepted = new HashSet<>();
        final List<AcquiredRange> held = new ArrayList<>();
        final ShareConfig runConfig;
        final SharePartition partition;
        long logEnd;
        long now;

        RandomRun(int seed) {
            random = new Random(seed);
            runConfig = new ShareConfig(100, 1_000, 10 + random.nextInt(60), true);
            partition = SharePartition.fresh(KEY, 0, 0, () -> runConfig);
            Map<Long, Long> openSince = new HashMap<>();
            long next = 0;
            while (next < 400) {
                long producer = 1 + random.nextInt(3);
                int size = 1 + random.nextInt(4);
                int kind = random.nextInt(10);
                if (kind < 3) {
                    log.add(new LogBatch(next, next + size - 1));
                    addDeliverable(next, next + size - 1);
                    next += size;
                } else if (kind < 8 || !openSince.containsKey(producer)) {
                    openSince.putIfAbsent(producer, next);
                    log.add(LogBatch.transactional(next, next + size - 1, producer));
                    next += size;
                } else {
                    next = end(producer, openSince.remove(producer), next, random.nextBoolean());
                }
            }
            for (Map.Entry<Long, Long> open : openSince.entrySet()) {
                next = end(open.getKey(), open.getValue(), next, random.nextBoolean());
            }
            logEnd = next;
        }

        /** Writes the marker of {@code producer}'s transaction begun at {@code first}; returns the next offset. */
        long end(long producer, long first, long markerOffset, boolean commit) {
            log.add(marker(markerOffset, producer));
            transactions.add(new long[] {first, markerOffset});
            if (commit) {
                for (LogBatch b : log) {
                    if (b.transactional() && !b.control() && b.producerId() == producer && b.firstOffset() >= first) {
                        addDeliverable(b.firstOffset(), b.lastOffset());
                    }
                }
            } else {
                aborted.add(new AbortedTransaction(producer, first, markerOffset));
            }
            return markerOffset + 1;
        }

        LogBatch batchOf(long o) {
            for (LogBatch b : log) {
                if (b.firstOffset() <= o && o <= b.lastOffset()) {
                    return b;
                }
            }
            return null;
        }

        void addDeliverable(long first, long last) {
            for (long o = first; o <= last; o++) {
                deliverable.add(o);
            }
        }

        /** The last stable offset once the log is written up to {@code length}. */
        long lastStableOffset(long length) {
            long lso = length;
            for (long[] t : transactions) {
                if (t[0] < length && t[1] >= length) {
                    lso = Math.min(lso, t[0]);
                }
            }
            return lso;
        }

        void run() {
            long length = 0;
            for (int step = 0; step < 2_000; step++) {
                if (random.nextInt(4) == 0) {
                    length = Math.min(logEnd, length + random.nextInt(20));
                }
                step(length);
            }
            for (int step = 0; step < 20_000 && partition.startOffset() < logEnd; step++) {
                step(logEnd);
            }
            assertThat(accepted).as("every committed record accepted").isEqualTo(deliverable);
            assertThat(partition.startOffset()).isEqualTo(logEnd);
        }

        void step(long length) {
            long lso = lastStableOffset(length);
            long fetchOffset = partition.nextFetchOffset();
            // The batches from the one holding the fetch offset on, as many as one read returns.
            int batchesRead = 1 + random.nextInt(8);
            List<LogBatch> read = new ArrayList<>();
            for (LogBatch b : log) {
                if (b.lastOffset() >= fetchOffset && b.lastOffset() < length && read.size() < batchesRead) {
                    read.add(b);
                }
            }
            AcquireLimits limits = new AcquireLimits(1 + random.nextInt(10), 1 + random.nextInt(5),
                    random.nextBoolean() ? AcquireMode.BATCH_OPTIMIZED : AcquireMode.RECORD_LIMIT);
            String member = "m" + random.nextInt(3);
            for (AcquiredRange r : partition.acquire(member, fetchOffset, read, limits,
                    Isolation.readCommitted(lso, aborted), now)) {
                for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                    assertThat(o).as("acquired below the last stable offset %d", lso).isLessThan(lso);
                    assertThat(deliverable).as("only committed data is acquired: %d in %s, read %s, aborted %s, lso %d",
                            o, batchOf(o), read, aborted, lso).contains(o);
                }
                int choice = random.nextInt(10);
                AcknowledgeType type = choice < 7 ? AcknowledgeType.ACCEPT : AcknowledgeType.RELEASE;
                if (choice == 9) {
                    held.add(r);
                    continue;
                }
                AckResult ack = partition.acknowledge(member, List.of(AckBatch.of(r.firstOffset(), r.lastOffset(),
                        type)), now);
                assertThat(ack.isError()).as("ack %s", ack).isFalse();
                partition.commit(ack.pending());
                if (type == AcknowledgeType.ACCEPT) {
                    for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                        assertThat(accepted.add(o)).as("offset %d accepted once", o).isTrue();
                    }
                }
            }
            if (!held.isEmpty() && random.nextInt(5) == 0) {
                now += 101;
                partition.expireLocks(now);
                held.clear();
            }
        }
    }

    private static final class CountingEvents implements ShareEvents {
        int acquired;

        @Override
        public void onAcquired(int deliveryCount) {
            acquired++;
        }
    }
}
