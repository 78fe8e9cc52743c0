package io.pier.log;

import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.values;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Transactional batches, end markers, the last stable offset and the aborted transactions. */
class TransactionalLogTest {
    private static final long T0 = 1_700_000_000_000L;
    private static final long A = 100;
    private static final long B = 200;
    private static final long C = 300;
    private static final short TV1 = 1;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);

    private PartitionLog open(Durability durability) throws IOException {
        return PartitionLog.open(tmp.resolve("p"), config(durability), clock);
    }

    private static MemoryRecords txn(long producerId, short epoch, int firstSeq, int count) {
        SimpleRecord[] rs = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            rs[i] = new SimpleRecord(T0, null, (producerId + "-" + (firstSeq + i)).getBytes(UTF_8));
        }
        return MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, firstSeq, rs);
    }

    private static long marker(PartitionLog log, long producerId, boolean commit) throws IOException {
        return log.appendEndTxnMarker(producerId, (short) 0, 0, commit, TV1).baseOffset();
    }

    /** Offsets 0..1 A, 2 B, 3 plain, 4..5 C, 6 A, 7 B(abort), 8 A(commit), 9 C(abort). */
    private static void writeInterleaved(PartitionLog log) throws IOException {
        log.append(txn(A, (short) 0, 0, 2));
        log.append(txn(B, (short) 0, 0, 1));
        log.append(values(T0, "plain"));
        log.append(txn(C, (short) 0, 0, 2));
        log.append(txn(A, (short) 0, 2, 1));
        assertThat(marker(log, B, false)).isEqualTo(7);
        assertThat(marker(log, A, true)).isEqualTo(8);
        assertThat(marker(log, C, false)).isEqualTo(9);
    }

    @Test
    void shouldTellEachBatchInPlaceItsProducerAndWhetherItIsTransactional() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            writeInterleaved(log);

            SegmentBatches batches = log.readBatchesInPlace(0, Integer.MAX_VALUE, true);

            assertThat(batches.count()).isEqualTo(8);
            assertThat(batches.producerId(0)).isEqualTo(A);
            assertThat(batches.isTransactional(0)).isTrue();
            assertThat(batches.isControl(0)).isFalse();
            assertThat(batches.producerId(2)).as("a plain batch has no producer").isEqualTo(RecordBatch.NO_PRODUCER_ID);
            assertThat(batches.isTransactional(2)).isFalse();
            assertThat(batches.producerId(5)).isEqualTo(B);
            assertThat(batches.isControl(5)).isTrue();
            assertThat(batches.isTransactional(5)).as("a marker is a transactional control batch").isTrue();
            assertThat(log.abortedTransactions(0, 10))
                    .containsExactly(new AbortedTransaction(B, 2, 7), new AbortedTransaction(C, 4, 9));
        }
    }

    @Test
    void shouldMoveTheLastStableOffsetOnlyWhenTheEarliestOngoingTransactionEnds() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(values(T0, "before"));
            assertThat(log.lastStableOffset()).isEqualTo(1);

            log.append(txn(A, (short) 0, 0, 2)); // 1..2
            log.append(txn(B, (short) 0, 0, 1)); // 3
            log.append(txn(A, (short) 0, 2, 1)); // 4: A's transaction still began at 1
            assertThat(log.lastStableOffset()).isEqualTo(1);

            marker(log, B, true); // 5: B ends, but A began earlier
            assertThat(log.lastStableOffset()).isEqualTo(1);

            marker(log, A, false); // 6
            assertThat(log.lastStableOffset()).isEqualTo(log.highWatermark()).isEqualTo(7);

            log.append(txn(A, (short) 0, 3, 1)); // 7: A's next transaction
            assertThat(log.lastStableOffset()).isEqualTo(7);
        }
    }

    @Test
    void shouldNeverLetTheLastStableOffsetPassTheHighWatermark() throws IOException {
        try (PartitionLog log = open(Durability.DURABLE)) {
            log.append(txn(A, (short) 0, 0, 2));
            log.flush();
            marker(log, A, true);
            log.append(values(T0, "x"));
            assertThat(log.highWatermark()).isEqualTo(2);
            assertThat(log.lastStableOffset()).as("the marker is not flushed yet").isZero();
            log.flush();
            assertThat(log.lastStableOffset()).isEqualTo(4);
        }
    }

    @Test
    void shouldListAbortedTransactionsOverlappingAFetch() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            writeInterleaved(log);

            assertThat(log.abortedTransactions(0, 10)).containsExactly(
                    new AbortedTransaction(B, 2, 7), new AbortedTransaction(C, 4, 9));
            assertThat(log.abortedTransactions(0, 3)).as("C began at 4").containsExactly(
                    new AbortedTransaction(B, 2, 7));
            assertThat(log.abortedTransactions(0, 2)).as("nothing aborted begins below 2").isEmpty();
            assertThat(log.abortedTransactions(8, 10)).as("B's marker is at 7").containsExactly(
                    new AbortedTransaction(C, 4, 9));
            assertThat(log.abortedTransactions(7, 8)).as("C is still open at 7").containsExactly(
                    new AbortedTransaction(B, 2, 7), new AbortedTransaction(C, 4, 9));
            assertThat(log.abortedTransactions(10, 20)).isEmpty();
        }
    }

    @Test
    void shouldFindALongAbortedTransactionBehindAShortOneThatEndedFirst() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(txn(A, (short) 0, 0, 1)); // 0: A begins
            log.append(txn(B, (short) 0, 0, 1)); // 1: B begins
            marker(log, B, false); // 2
            log.append(values(T0, "x", "y", "z")); // 3..5
            marker(log, A, false); // 6

            assertThat(log.abortedTransactions(3, 5)).containsExactly(new AbortedTransaction(A, 0, 6));
            assertThat(log.abortedTransactions(0, 2)).containsExactly(
                    new AbortedTransaction(B, 1, 2), new AbortedTransaction(A, 0, 6));
        }
    }

    @Test
    void shouldReadCommittedOnlyBelowTheLastStableOffsetWithTheAbortedTransactionsOfTheRange() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(txn(B, (short) 0, 0, 1)); // 0
            marker(log, B, false); // 1
            log.append(values(T0, "plain")); // 2
            log.append(txn(A, (short) 0, 0, 2)); // 3..4, ongoing

            LogReadResult<SegmentRecords> committed = log.readInPlace(0, 1 << 20, true,
                    IsolationLevel.READ_COMMITTED);
            assertThat(committed.lastStableOffset()).isEqualTo(3);
            assertThat(committed.highWatermark()).isEqualTo(5);
            assertThat(lastOffsetOf(committed.records())).isEqualTo(2);
            assertThat(committed.abortedTransactions()).containsExactly(new AbortedTransaction(B, 0, 1));

            LogReadResult<SegmentRecords> atLso = log.readInPlace(3, 1 << 20, true, IsolationLevel.READ_COMMITTED);
            assertThat(atLso.records().sizeInBytes()).isZero();
            assertThat(atLso.abortedTransactions()).isEmpty();

            LogReadResult<SegmentRecords> uncommitted = log.readInPlace(0, 1 << 20, true,
                    IsolationLevel.READ_UNCOMMITTED);
            assertThat(lastOffsetOf(uncommitted.records())).isEqualTo(4);
            assertThat(uncommitted.lastStableOffset()).isEqualTo(3);
            assertThat(uncommitted.abortedTransactions()).isEmpty();
        }
    }

    @Test
    void shouldWriteMarkersAsControlBatchesThatReadsReturn() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(txn(A, (short) 0, 0, 1));
            log.appendEndTxnMarker(A, (short) 0, 5, false, TV1);

            List<RecordBatch> batches = new ArrayList<>();
            log.read(0, 1 << 20, false).records().batches().forEach(batches::add);
            assertThat(batches).hasSize(2);
            RecordBatch control = batches.get(1);
            assertThat(control.isControlBatch()).isTrue();
            assertThat(control.isTransactional()).isTrue();
            assertThat(control.producerId()).isEqualTo(A);
            assertThat(control.baseOffset()).isEqualTo(1);
            Record r = control.iterator().next();
            EndTransactionMarker m = EndTransactionMarker.deserialize(r);
            assertThat(m.controlType()).isEqualTo(ControlRecordType.ABORT);
            assertThat(m.coordinatorEpoch()).isEqualTo(5);
            assertThat(log.offsetForTimestamp(T0).offset()).isZero();
        }
    }

    @Test
    void shouldRejectMarkersWithAStaleProducerOrCoordinatorEpoch() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(txn(A, (short) 3, 0, 1));
            assertThatThrownBy(() -> log.appendEndTxnMarker(A, (short) 2, 0, true, TV1))
                    .isInstanceOf(InvalidProducerEpochException.class);
            assertThatThrownBy(() -> log.appendEndTxnMarker(A, (short) 3, 0, true, (short) 2))
                    .as("a TV2 marker carries the bumped epoch").isInstanceOf(InvalidProducerEpochException.class);
            assertThat(log.logEndOffset()).isEqualTo(1);
            assertThat(log.lastStableOffset()).isZero();

            log.appendEndTxnMarker(A, (short) 4, 7, false, (short) 2);
            assertThat(log.lastStableOffset()).isEqualTo(2);
            assertThatThrownBy(() -> log.appendEndTxnMarker(A, (short) 5, 6, false, (short) 2))
                    .isInstanceOf(TransactionCoordinatorFencedException.class);
            // The marker moved the producer to epoch 4: its data with epoch 3 is fenced, epoch 4 starts at 0.
            assertThatThrownBy(() -> log.append(txn(A, (short) 3, 1, 1)))
                    .isInstanceOf(InvalidProducerEpochException.class);
            assertThat(log.append(txn(A, (short) 4, 0, 1)).baseOffset()).isEqualTo(2);
        }
    }

    @Test
    void shouldValidateTransactionalSequencesAndRecogniseRetries() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            log.append(txn(A, (short) 0, 0, 2));
            AppendResult dup = log.append(txn(A, (short) 0, 0, 2));
            assertThat(dup.duplicate()).isTrue();
            assertThatThrownBy(() -> log.append(txn(A, (short) 0, 5, 1)))
                    .isInstanceOf(OutOfOrderSequenceException.class);
            assertThat(log.lastStableOffset()).isZero();
        }
    }

    @Test
    void shouldWriteAMarkerForAProducerWithNoOngoingTransaction() throws IOException {
        try (PartitionLog log = open(Durability.NONE)) {
            assertThat(log.appendEndTxnMarker(A, (short) 0, 0, false, TV1).baseOffset()).isZero();
            assertThat(log.lastStableOffset()).isEqualTo(1);
            assertThat(log.abortedTransactions(0, 1)).isEmpty();
        }
    }

    @Test
    void shouldRestoreOngoingTransactionsAndAbortedListAfterClose() throws IOException {
        try (PartitionLog log = open(Durability.DURABLE)) {
            writeInterleaved(log);
            log.append(txn(B, (short) 0, 1, 1)); // 10: B's next transaction, ongoing
            log.flush();
        }
        try (PartitionLog log = open(Durability.DURABLE)) {
            assertRestored(log);
        }
    }

    @Test
    void shouldRestoreOngoingTransactionsAndAbortedListAfterAnAbruptClose() throws IOException {
        PartitionLog crashed = open(Durability.DURABLE);
        writeInterleaved(crashed);
        crashed.append(txn(B, (short) 0, 1, 1)); // 10
        crashed.flush(); // the recovery point stays behind: recovery rescans the whole segment
        crashed.closeAbruptly();

        try (PartitionLog log = open(Durability.DURABLE)) {
            assertRestored(log);
        }
    }

    private static void assertRestored(PartitionLog log) throws IOException {
        assertThat(log.logEndOffset()).isEqualTo(11);
        assertThat(log.lastStableOffset()).isEqualTo(10);
        assertThat(log.abortedTransactions(0, 11)).containsExactly(
                new AbortedTransaction(B, 2, 7), new AbortedTransaction(C, 4, 9));
        // The ongoing transaction and the sequences came back: a retry is a duplicate, the marker ends it.
        assertThat(log.append(txn(B, (short) 0, 1, 1)).duplicate()).isTrue();
        marker(log, B, false);
        log.flush();
        assertThat(log.lastStableOffset()).isEqualTo(12);
        assertThat(log.abortedTransactions(10, 12)).containsExactly(new AbortedTransaction(B, 10, 11));
    }

    /**
     * A transactional batch of a newer epoch while a transaction of an older one is ongoing means
     * the older one's marker is missing here: both then end with whatever marker comes next (the
     * shape a read_committed reader seeing an aborted transaction would leave in the log), so
     * the table reports it, once.
     */
    @Test
    void shouldReportATransactionalBatchOfANewerEpochJoiningATransactionWithoutItsMarker() {
        ProducerStateTable table = new ProducerStateTable();
        assertThat(table.record(A, (short) 3, 0, 2, 0, 2, true)).isEqualTo(-1); // begins under epoch 3
        assertThat(table.record(A, (short) 3, 3, 3, 3, 3, true)).isEqualTo(-1); // the same transaction
        assertThat(table.record(A, (short) 4, 0, 1, 4, 5, true)).isZero(); // epoch 4, no marker between
        assertThat(table.record(A, (short) 4, 2, 2, 6, 6, true)).isEqualTo(-1); // said once
        table.endTransaction(A, (short) 5, 0, 7);
        assertThat(table.record(A, (short) 5, 0, 0, 8, 8, true)).isEqualTo(-1); // after a marker: a new one
        assertThat(table.record(B, (short) 1, 0, 0, 9, 9, false)).isEqualTo(-1); // idempotent batches never
        assertThat(table.record(B, (short) 2, 0, 0, 10, 10, false)).isEqualTo(-1);
    }

    @Test
    void shouldForgetATornMarkerAndKeepItsTransactionOngoing() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        PartitionLog log = PartitionLog.open(tmp.resolve("p"), config(Durability.DURABLE), clock, io);
        log.append(txn(A, (short) 0, 0, 2));
        log.flush();
        marker(log, A, false); // never flushed
        io.powerLoss(null);

        try (PartitionLog reopened = open(Durability.DURABLE)) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
            assertThat(reopened.lastStableOffset()).isZero();
            assertThat(reopened.abortedTransactions(0, 2)).isEmpty();
        }
    }

    @Test
    void shouldTrimAbortedTransactionsBelowTheLogStartAndKeepOngoingOnes() throws IOException {
        LogConfig small = TestBatches.withSegmentBytes(config(Durability.NONE), 150);
        try (PartitionLog log = PartitionLog.open(tmp.resolve("p"), small, clock)) {
            log.append(txn(B, (short) 0, 0, 1)); // 0
            marker(log, B, false); // 1
            log.append(txn(A, (short) 0, 0, 1)); // 2: ongoing across the delete
            log.append(txn(C, (short) 0, 0, 1)); // 3
            marker(log, C, false); // 4
            log.append(values(T0, "x")); // 5
            int segmentsBefore = log.segmentCount();
            assertThat(segmentsBefore).isGreaterThan(2);

            assertThat(log.deleteRecordsBefore(4)).isEqualTo(4);
            assertThat(log.abortedTransactions(0, 6)).as("B ended below the log start")
                    .containsExactly(new AbortedTransaction(C, 3, 4));
            assertThat(log.lastStableOffset()).as("A is still ongoing").isEqualTo(2);

            marker(log, A, true); // 6
            assertThat(log.lastStableOffset()).isEqualTo(7);
        }
        try (PartitionLog log = PartitionLog.open(tmp.resolve("p"), small, clock)) {
            assertThat(log.logStartOffset()).isEqualTo(4);
            assertThat(log.lastStableOffset()).isEqualTo(7);
            assertThat(log.abortedTransactions(0, 7)).containsExactly(new AbortedTransaction(C, 3, 4));
        }
    }

    @Test
    void shouldKeepTheSegmentWhereAnOngoingTransactionBeganAcrossARestart() throws IOException {
        LogConfig small = TestBatches.withSegmentBytes(config(Durability.NONE), 150);
        try (PartitionLog log = PartitionLog.open(tmp.resolve("p"), small, clock)) {
            log.append(txn(A, (short) 0, 0, 1)); // 0: ongoing
            log.append(values(T0, "x")); // 1
            log.append(values(T0, "y")); // 2
            log.append(values(T0, "z")); // 3
            assertThat(log.deleteRecordsBefore(3)).isEqualTo(3);
            assertThat(log.lastStableOffset()).isZero();
        }
        try (PartitionLog log = PartitionLog.open(tmp.resolve("p"), small, clock)) {
            assertThat(log.lastStableOffset()).as("A's first batch was kept, so A is still ongoing").isZero();
            marker(log, A, false);
            assertThat(log.lastStableOffset()).isEqualTo(log.logEndOffset());
            assertThat(log.abortedTransactions(3, 5)).containsExactly(new AbortedTransaction(A, 0, 4));
        }
    }

    private static long lastOffsetOf(SegmentRecords records) throws IOException {
        Send send = records.toSend();
        CollectingChannel out = new CollectingChannel(1 << 20);
        while (!send.completed()) {
            send.writeTo(out);
        }
        MemoryRecords copy = MemoryRecords.readableRecords(ByteBuffer.wrap(out.bytes.toByteArray()));
        long last = -1;
        for (RecordBatch b : copy.batches()) {
            last = b.lastOffset();
        }
        return last;
    }

    @Test
    void shouldReportEachProducersStateAsDescribeProducersDoesAndRebuildItOnOpen() throws IOException {
        List<ActiveProducer> expected;
        try (PartitionLog log = open(Durability.NONE)) {
            // Given A with an ongoing transaction, B whose transaction ended, and an idempotent C
            log.append(values(T0, "plain"));                               // 0
            log.append(txn(A, (short) 3, 0, 2));                           // 1..2
            log.append(txn(B, (short) 0, 0, 1));                           // 3
            log.append(TestBatches.idempotent(C, (short) 1, 0, 4));        // 4..7
            log.append(txn(A, (short) 3, 2, 1));                           // 8
            clock.advance(5_000);
            log.appendEndTxnMarker(B, (short) 0, 7, true, TV1);            // 9

            // Then each is reported by id, with its transaction's start or -1
            expected = List.of(
                    new ActiveProducer(A, (short) 3, 2, T0, -1, 1),
                    new ActiveProducer(B, (short) 0, 0, T0 + 5_000, 7, -1),
                    new ActiveProducer(C, (short) 1, 3, 1000L, -1, -1));
            assertThat(log.activeProducers()).isEqualTo(expected);
        }
        // And a reopened log, which rebuilds the table from the batches, reports the same
        try (PartitionLog log = open(Durability.NONE)) {
            assertThat(log.activeProducers()).isEqualTo(expected);
        }
    }
}
