package io.pier.share;

import static io.pier.share.AcknowledgeType.ACCEPT;
import static io.pier.share.AcknowledgeType.GAP;
import static io.pier.share.AcknowledgeType.REJECT;
import static io.pier.share.AcknowledgeType.RELEASE;
import static io.pier.share.AcknowledgeType.RENEW;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.state.InMemorySharePersister;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateWrite;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

class SharePartitionTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long LOCK_MS = 1_000;

    private ShareConfig config = new ShareConfig(LOCK_MS, 5, 100, true);
    private TestLog log = TestLog.ofBatchSizes(10, 10, 10);
    private SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config);

    // Given/When helpers --------------------------------------------------------------------

    private List<AcquiredRange> fetch(String member, int maxRecords, long nowMs) {
        return fetch(member, maxRecords, 500, AcquireMode.BATCH_OPTIMIZED, nowMs);
    }

    private List<AcquiredRange> fetch(String member, int maxRecords, int batchSize, AcquireMode mode, long nowMs) {
        long from = sp.nextFetchOffset();
        return sp.acquire(member, from, log.read(from), new AcquireLimits(maxRecords, batchSize, mode), nowMs);
    }

    private Errors ack(String member, long first, long last, AcknowledgeType type, long nowMs) {
        return ackAll(member, List.of(AckBatch.of(first, last, type)), nowMs);
    }

    private Errors ackAll(String member, List<AckBatch> batches, long nowMs) {
        AckResult r = sp.acknowledge(member, batches, nowMs);
        if (r.isError()) {
            return r.error();
        }
        sp.commit(r.pending());
        return Errors.NONE;
    }

    private static AcquiredRange range(long first, long last, int count) {
        return new AcquiredRange(first, last, (short) count);
    }

    // Acquisition -------------------------------------------------------------------------

    @Test
    void shouldAcquireNewRecordsWithDeliveryCountOne() {
        List<AcquiredRange> got = fetch("m1", 10, 0);

        assertThat(got).containsExactly(range(0, 9, 1));
        assertThat(sp.stateOf(5)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.ownerOf(5)).isEqualTo("m1");
        assertThat(sp.startOffset()).isZero();
        assertThat(sp.endOffset()).isEqualTo(9);
        assertThat(sp.nextFetchOffset()).isEqualTo(10);
        assertThat(sp.recordCount(RecordState.ACQUIRED)).isEqualTo(10);
    }

    @Test
    void shouldRedeliverReleasedRecordsWithCountTwo() {
        fetch("m1", 10, 0);
        assertThat(ack("m1", 0, 9, RELEASE, 1)).isEqualTo(Errors.NONE);
        assertThat(sp.nextFetchOffset()).isZero();
        assertThat(sp.consumeStateChanged()).isTrue();

        List<AcquiredRange> got = fetch("m2", 10, 2);

        assertThat(got).containsExactly(range(0, 9, 2));
        assertThat(sp.ownerOf(0)).isEqualTo("m2");
    }

    @Test
    void shouldArchiveOnReleaseWhenDeliveryLimitReached() {
        config = new ShareConfig(LOCK_MS, 2, 100, true);
        fetch("m1", 10, 0);
        ack("m1", 0, 9, RELEASE, 1);
        fetch("m1", 10, 2);

        assertThat(ack("m1", 0, 9, RELEASE, 3)).isEqualTo(Errors.NONE);

        assertThat(sp.startOffset()).isEqualTo(10);
        assertThat(sp.stateOf(3)).isNull();
        assertThat(fetch("m1", 10, 4)).containsExactly(range(10, 19, 1));
    }

    @Test
    void shouldArchiveOnLockExpiryWhenDeliveryLimitReached() {
        config = new ShareConfig(LOCK_MS, 2, 100, true);
        fetch("m1", 10, 0);
        Optional<ShareStateWrite> first = sp.expireLocks(LOCK_MS);
        assertThat(first).isPresent();
        assertThat(first.get().batches()).containsExactly(new PersistedBatch(0, 9, PersistedBatch.AVAILABLE, (short) 1));
        assertThat(fetch("m1", 10, LOCK_MS + 1)).containsExactly(range(0, 9, 2));

        Optional<ShareStateWrite> second = sp.expireLocks(2 * LOCK_MS + 1);

        assertThat(second).isPresent();
        assertThat(second.get().batches()).containsExactly(new PersistedBatch(0, 9, PersistedBatch.ARCHIVED, (short) 2));
        assertThat(sp.startOffset()).isEqualTo(10);
        assertThat(sp.inFlightRecords()).isZero();
    }

    @Test
    void shouldRestartTheLocksOfAnAcquisitionOnlyWhereItsDeliveryIsStillHeld() {
        List<AcquiredRange> acquired = fetch("m1", 10, 0);
        assertThat(acquired).containsExactly(range(0, 9, 1));
        assertThat(ack("m1", 2, 3, RELEASE, 100)).isEqualTo(Errors.NONE);
        assertThat(fetch("m2", 2, 200)).as("the released ones, delivered again").containsExactly(range(2, 3, 2));

        sp.restartLocks("m1", acquired, 900);

        assertThat(sp.expireLocks(LOCK_MS + 200)).as("m2's lock on 2-3, not restarted").isPresent();
        assertThat(sp.stateOf(2)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.stateOf(0)).as("m1's, restarted at 900").isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.stateOf(9)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.nextDeadlineMs()).isEqualTo(900 + LOCK_MS);
        assertThat(sp.expireLocks(900 + LOCK_MS)).isPresent();
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.stateOf(9)).isEqualTo(RecordState.AVAILABLE);
    }

    @Test
    void shouldNotExpireBeforeDeadlineAndReportIt() {
        fetch("m1", 10, 100);

        assertThat(sp.nextDeadlineMs()).isEqualTo(100 + LOCK_MS);
        assertThat(sp.expireLocks(100 + LOCK_MS - 1)).isEmpty();
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.expireLocks(100 + LOCK_MS)).isPresent();
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.nextDeadlineMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldNeverRedeliverRejectedRecords() {
        fetch("m1", 10, 0);
        assertThat(ack("m1", 0, 9, REJECT, 1)).isEqualTo(Errors.NONE);

        List<AcquiredRange> got = fetch("m1", 30, 2);

        assertThat(got).containsExactly(range(10, 29, 1));
        assertThat(sp.startOffset()).isEqualTo(10);
    }

    @Test
    void shouldStopAcquiringAtInFlightCapUntilAcked() {
        config = new ShareConfig(LOCK_MS, 5, 15, true);
        // Budget 15 runs out inside the second log batch, which batch_optimized finishes.
        assertThat(fetch("m1", 100, 0)).containsExactly(range(0, 19, 1));
        assertThat(sp.hasAcquirableWork(log.endOffset())).isFalse();
        assertThat(fetch("m2", 100, 0)).isEmpty();

        ack("m1", 0, 9, ACCEPT, 1);

        assertThat(sp.hasAcquirableWork(log.endOffset())).isTrue();
        assertThat(fetch("m2", 100, 10, AcquireMode.RECORD_LIMIT, 2)).containsExactly(range(20, 24, 1));
    }

    @Test
    void shouldNotCountRecordsWhoseAcceptIsBeingWrittenAgainstTheInFlightCap() {
        config = new ShareConfig(LOCK_MS, 5, 20, true);
        assertThat(fetch("m1", 10, 0)).containsExactly(range(0, 9, 1));
        assertThat(fetch("m2", 10, 0)).containsExactly(range(10, 19, 1));
        assertThat(sp.hasAcquirableWork(log.endOffset())).isFalse();

        AckResult accepting = sp.acknowledge("m1", List.of(AckBatch.of(0, 9, ACCEPT)), 1);

        assertThat(sp.startOffset()).as("not durable yet").isZero();
        assertThat(sp.hasAcquirableWork(log.endOffset())).isTrue();
        assertThat(fetch("m3", 100, 2)).as("the ten leaving make room for ten").containsExactly(range(20, 29, 1));
        sp.commit(accepting.pending());
        assertThat(sp.startOffset()).isEqualTo(10);
        assertThat(sp.inFlightRecords()).isEqualTo(20);
    }

    @Test
    void shouldCountRecordsBeingReleasedAgainstTheInFlightCap() {
        config = new ShareConfig(LOCK_MS, 5, 20, true);
        fetch("m1", 10, 0);
        fetch("m2", 10, 0);

        AckResult releasing = sp.acknowledge("m1", List.of(AckBatch.of(0, 9, RELEASE)), 1);

        assertThat(sp.hasAcquirableWork(log.endOffset())).as("released records stay in the window").isFalse();
        assertThat(fetch("m3", 100, 2)).isEmpty();
        sp.commit(releasing.pending());
        assertThat(fetch("m3", 100, 3)).containsExactly(range(0, 9, 2));
    }

    @Test
    void shouldSayWhoHoldsAFullWindowUpBehindRecordsBeingAccepted() {
        config = new ShareConfig(LOCK_MS, 5, 20, true);
        fetch("m1", 10, 0);
        fetch("m2", 10, 0);
        sp.acknowledge("m1", List.of(AckBatch.of(0, 9, ACCEPT)), 1);
        assertThat(fetch("m3", 100, 2)).containsExactly(range(20, 29, 1));

        assertThat(sp.heldUpByMs("m1", 3)).as("m1's records are leaving").isEqualTo(-1);
        assertThat(sp.heldUpByMs("m2", 3)).as("m2 holds the first record that stays").isZero();
    }

    @Test
    void shouldReacquireReleasedRecordsWhenWindowIsFull() {
        config = new ShareConfig(LOCK_MS, 5, 10, true);
        fetch("m1", 10, 0);
        ack("m1", 3, 4, RELEASE, 1);

        List<AcquiredRange> got = fetch("m2", 100, 2);

        assertThat(got).containsExactly(range(3, 4, 2));
        assertThat(sp.endOffset()).isEqualTo(9);
    }

    @Test
    void shouldSayWhoHoldsAFullWindowUpAndSinceWhenItsFetchesHaveFoundIt() {
        config = new ShareConfig(LOCK_MS, 5, 20, true);
        assertThat(fetch("m1", 10, 100)).containsExactly(range(0, 9, 1));
        assertThat(sp.heldUpByMs("m1", 105)).as("the window still has room").isEqualTo(-1);
        assertThat(fetch("m2", 10, 110)).containsExactly(range(10, 19, 1));
        assertThat(sp.hasAcquirableWork(log.endOffset())).isFalse();

        assertThat(sp.heldUpByMs("m2", 120)).as("m2's acknowledgement would not make room").isEqualTo(-1);
        assertThat(sp.heldUpByMs("m1", 130)).as("m1 holds the first record: found now").isZero();
        assertThat(sp.heldUpByMs("m1", 134)).isEqualTo(4);

        ack("m2", 10, 19, ACCEPT, 135);
        assertThat(sp.heldUpByMs("m1", 140)).as("still full: 10..19 wait behind 0").isEqualTo(10);

        AckResult inFlight = sp.acknowledge("m1", List.of(AckBatch.of(0, 0, ACCEPT)), 141);
        assertThat(sp.heldUpByMs("m1", 142)).as("its acknowledgement is on its way").isEqualTo(-1);
        sp.rollback(inFlight.pending());
        assertThat(sp.heldUpByMs("m1", 143)).isEqualTo(13);

        assertThat(ack("m1", 0, 0, RENEW, 150)).isEqualTo(Errors.NONE);
        assertThat(sp.heldUpByMs("m1", 155)).as("a renewed lock starts again").isZero();
        assertThat(sp.heldUpByMs("m1", 157)).isEqualTo(2);

        ack("m1", 0, 4, ACCEPT, 160);
        assertThat(sp.startOffset()).isEqualTo(5);
        assertThat(sp.heldUpByMs("m1", 161)).as("room again").isEqualTo(-1);
    }

    @Test
    void shouldAcquireAtMostMaxRecordsInRecordLimitMode() {
        List<AcquiredRange> got = fetch("m1", 4, 500, AcquireMode.RECORD_LIMIT, 0);

        assertThat(got).containsExactly(range(0, 3, 1));
        // The rest of the log batch is cached, available, and fetched next.
        assertThat(sp.endOffset()).isEqualTo(9);
        assertThat(sp.stateOf(4)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.nextFetchOffset()).isEqualTo(4);
        assertThat(fetch("m2", 4, 500, AcquireMode.RECORD_LIMIT, 1)).containsExactly(range(4, 7, 1));
    }

    @Test
    void shouldFinishLogBatchAndCutAtBatchBoundariesInBatchOptimizedMode() {
        log = TestLog.ofBatchSizes(3, 3, 3, 3, 3);

        List<AcquiredRange> got = fetch("m1", 7, 4, AcquireMode.BATCH_OPTIMIZED, 0);

        // 7 records requested: the third batch is finished (9 records), cut after >= 4 records.
        assertThat(got).containsExactly(range(0, 5, 1), range(6, 8, 1));
        assertThat(sp.nextDeadlineMs()).isEqualTo(LOCK_MS);
    }

    @Test
    void shouldReturnSingleRangeWhenBatchSizeCoversSpan() {
        log = TestLog.ofBatchSizes(3, 3, 3);

        assertThat(fetch("m1", 100, 500, AcquireMode.BATCH_OPTIMIZED, 0)).containsExactly(range(0, 8, 1));
    }

    @Test
    void shouldArchiveTransactionMarkersInsteadOfAcquiringThem() {
        // Data 0..2, a marker at 3, data 4..5, a marker at 6
        List<LogBatch> read = List.of(new LogBatch(0, 2), new LogBatch(3, 3, true), new LogBatch(4, 5),
                new LogBatch(6, 6, true));
        AcquireLimits limits = new AcquireLimits(100, 500, AcquireMode.BATCH_OPTIMIZED);

        List<AcquiredRange> got = sp.acquire("m1", 0, read, limits, 0);

        assertThat(got).containsExactly(range(0, 2, 1), range(4, 5, 1));
        assertThat(sp.stateOf(3)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.stateOf(6)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.recordCount(RecordState.ACQUIRED)).isEqualTo(5);
        assertThat(sp.nextFetchOffset()).isEqualTo(7);
    }

    @Test
    void shouldMovePastAReadOfNothingButAMarker() {
        AcquireLimits limits = new AcquireLimits(100, 500, AcquireMode.RECORD_LIMIT);

        assertThat(sp.acquire("m1", 0, List.of(new LogBatch(0, 0, true)), limits, 0)).isEmpty();

        assertThat(sp.startOffset()).as("the marker does not hold the start offset back").isEqualTo(1);
        assertThat(sp.nextFetchOffset()).isEqualTo(1);
        assertThat(sp.acquire("m1", 1, List.of(new LogBatch(1, 2)), limits, 0)).containsExactly(range(1, 2, 1));
    }

    @Test
    void shouldArchiveCachedRecordsMissingFromLog() {
        fetch("m1", 10, 0);
        ack("m1", 0, 9, RELEASE, 1);
        // Compaction removed offsets 0..4; the read from 0 starts at 5.
        List<LogBatch> read = List.of(new LogBatch(5, 9), new LogBatch(10, 19));

        List<AcquiredRange> got = sp.acquire("m1", 0, read, new AcquireLimits(10, 500, AcquireMode.BATCH_OPTIMIZED), 2);

        assertThat(got).containsExactly(range(5, 9, 2), range(10, 19, 1));
        assertThat(sp.startOffset()).isEqualTo(5);
    }

    // Acknowledgement ---------------------------------------------------------------------

    @Test
    void shouldRejectAckFromWrongMember() {
        fetch("m1", 10, 0);

        assertThat(ack("m2", 0, 9, ACCEPT, 1)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ACQUIRED);
    }

    @Test
    void shouldCheckTheOwnerOfEveryOffsetOfARangeSpanningAcquisitions() {
        // Given two acquisitions by m1 (each request with its own member-id string), then one by m2
        fetch(new String("m1"), 10, 0);
        fetch(new String("m1"), 10, 0);
        fetch("m2", 10, 0);

        // When m1 acknowledges a range reaching into m2's records, Then all of it is refused
        assertThat(ack("m1", 5, 20, ACCEPT, 1)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.stateOf(5)).isEqualTo(RecordState.ACQUIRED);
        // And a range over both of its own acquisitions is accepted
        assertThat(ack("m1", 0, 19, ACCEPT, 1)).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(20);
    }

    @Test
    void shouldRejectAckOfOffsetNotAcquired() {
        fetch("m1", 4, 500, AcquireMode.RECORD_LIMIT, 0);

        assertThat(ack("m1", 2, 5, ACCEPT, 1)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.stateOf(2)).isEqualTo(RecordState.ACQUIRED);
    }

    @Test
    void shouldRejectAckPastCachedEndAsInvalidRequest() {
        fetch("m1", 10, 0);

        assertThat(ack("m1", 5, 12, ACCEPT, 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(ack("m1", 10, 12, ACCEPT, 1)).isEqualTo(Errors.INVALID_REQUEST);
    }

    @Test
    void shouldRejectAckWhenNothingInFlight() {
        assertThat(ack("m1", 0, 3, ACCEPT, 1)).isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldRejectMalformedAckBatches() {
        fetch("m1", 10, 0);

        assertThat(ackAll("m1", List.of(new AckBatch(5, 3, List.of(ACCEPT))), 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(ackAll("m1", List.of(new AckBatch(0, 3, List.of(ACCEPT, REJECT))), 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(ackAll("m1", List.of(new AckBatch(0, 3, List.of())), 1)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(ackAll("m1", List.of(AckBatch.of(5, 6, ACCEPT), AckBatch.of(0, 1, ACCEPT)), 1))
                .isEqualTo(Errors.INVALID_REQUEST);
        assertThat(sp.recordCount(RecordState.ACQUIRED)).isEqualTo(10);
    }

    @Test
    void shouldRollBackWholeRequestWhenOneBatchFails() {
        fetch("m1", 10, 0);
        fetch("m2", 10, 0);

        Errors e = ackAll("m1", List.of(AckBatch.of(0, 4, ACCEPT), AckBatch.of(10, 11, ACCEPT)), 1);

        assertThat(e).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.inTransition(0)).isFalse();
    }

    @Test
    void shouldApplyPerOffsetAckTypes() {
        fetch("m1", 10, 0);

        Errors e = ackAll("m1", List.of(new AckBatch(0, 3, List.of(ACCEPT, GAP, RELEASE, REJECT))), 1);

        assertThat(e).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(2);
        assertThat(sp.stateOf(2)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.stateOf(3)).isEqualTo(RecordState.ARCHIVED);
        assertThat(sp.stateOf(4)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.nextFetchOffset()).isEqualTo(2);
        assertThat(fetch("m2", 1, 2)).containsExactly(range(2, 2, 2));
    }

    @Test
    void shouldAdvanceStartOffsetOverContiguousTerminalRecordsAndDropThem() {
        fetch("m1", 20, 0);
        ack("m1", 5, 9, ACCEPT, 1);
        assertThat(sp.startOffset()).isZero();
        assertThat(sp.inFlightRecords()).isEqualTo(20);

        ack("m1", 0, 4, ACCEPT, 2);

        assertThat(sp.startOffset()).isEqualTo(10);
        assertThat(sp.inFlightRecords()).isEqualTo(10);
        assertThat(sp.stateOf(9)).isNull();

        ack("m1", 10, 19, REJECT, 3);
        assertThat(sp.startOffset()).isEqualTo(20);
        assertThat(sp.endOffset()).isEqualTo(20);
        assertThat(sp.inFlightRecords()).isZero();
        assertThat(sp.nextFetchOffset()).isEqualTo(20);
    }

    @Test
    void shouldRefuseAnAckBatchStartingBelowStartOffsetWhollyOrInPart() {
        fetch("m1", 20, 0);
        ack("m1", 0, 9, ACCEPT, 1);

        assertThat(ack("m1", 0, 12, ACCEPT, 2)).as("reaching into the window").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(ack("m1", 0, 9, REJECT, 3)).as("wholly below").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(ackAll("m1", List.of(AckBatch.of(5, 9, ACCEPT), AckBatch.of(13, 14, ACCEPT)), 4))
                .as("all or nothing").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.startOffset()).isEqualTo(10);
        assertThat(sp.stateOf(10)).isEqualTo(RecordState.ACQUIRED);
        assertThat(ack("m1", 10, 12, ACCEPT, 5)).as("the part still held").isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(13);
    }

    /**
     * The "accepted twice" of issue 39 in its last form. m1's lock on its first delivery of 0-9
     * expires; m2 takes 0-4 and accepts them, so the start offset passes them; a fetch of m1 sent
     * before its acknowledgement takes 5-9 again. m1's acknowledgement of its first delivery then
     * names 0-9 (the Kafka client merges consecutive offsets of one type into one batch): it holds
     * 5-9, but confirming the batch would tell it that it accepted 0-4, which m2 was told already.
     */
    @Test
    void shouldRefuseALateAckBatchWhoseHeadAnotherMemberSettledWhileItsTailIsHeldAgain() {
        log = TestLog.ofBatchSizes(5, 5, 5);
        assertThat(fetch("m1", 10, 0)).containsExactly(range(0, 9, 1));
        assertThat(sp.expireLocks(LOCK_MS)).isPresent();
        assertThat(fetch("m2", 5, LOCK_MS + 1)).containsExactly(range(0, 4, 2));
        assertThat(ack("m2", 0, 4, ACCEPT, LOCK_MS + 2)).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(5);
        assertThat(fetch("m1", 5, LOCK_MS + 3)).containsExactly(range(5, 9, 2));

        assertThat(ack("m1", 0, 9, ACCEPT, LOCK_MS + 4)).as("m1's late acknowledgement of its first delivery")
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.stateOf(5)).as("its second delivery still held").isEqualTo(RecordState.ACQUIRED);
        assertThat(ack("m1", 5, 9, ACCEPT, LOCK_MS + 5)).as("the acknowledgement of what it holds")
                .isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(10);
    }

    @Test
    void shouldRefuseTheLateAckOfAMemberWhoseRecordsWereReleasedAndSettledByAnother() {
        fetch("m1", 10, 0);
        PendingChange released = sp.releaseMember("m1", 1).orElseThrow();
        sp.commit(released);
        assertThat(fetch("m2", 10, 2)).containsExactly(range(0, 9, 2));
        assertThat(ack("m2", 0, 9, ACCEPT, 3)).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(10);

        // m1's acknowledgement of its first delivery arrives after all: it must not be told that
        // it accepted records m2 accepted.
        assertThat(ack("m1", 0, 9, ACCEPT, 4)).isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldTreatOffsetsOfPendingChangeAsInTransition() {
        fetch("m1", 10, 0);
        AckResult first = sp.acknowledge("m1", List.of(AckBatch.of(0, 4, RELEASE)), 1);
        assertThat(first.isError()).isFalse();
        assertThat(sp.inTransition(2)).isTrue();

        assertThat(ack("m1", 2, 2, ACCEPT, 2)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.nextFetchOffset()).isEqualTo(10);
        assertThat(sp.acquire("m2", 0, log.read(0), new AcquireLimits(10, 500, AcquireMode.BATCH_OPTIMIZED), 2))
                .containsExactly(range(10, 19, 1));

        sp.commit(first.pending());
        assertThat(sp.nextFetchOffset()).isZero();
        assertThat(fetch("m2", 5, 3)).containsExactly(range(0, 4, 2));
    }

    @Test
    void shouldBuildWriteWithChangedRangesAndStartOffsetBeforeAdvance() {
        fetch("m1", 10, 0);

        AckResult r = sp.acknowledge("m1", List.of(new AckBatch(0, 3, List.of(ACCEPT, ACCEPT, RELEASE, REJECT))), 1);

        ShareStateWrite w = r.pending().write().orElseThrow();
        assertThat(w.key()).isEqualTo(KEY);
        assertThat(w.startOffset()).isZero();
        assertThat(w.batches()).containsExactly(
                new PersistedBatch(0, 1, PersistedBatch.ACKNOWLEDGED, (short) 1),
                new PersistedBatch(2, 2, PersistedBatch.AVAILABLE, (short) 1),
                new PersistedBatch(3, 3, PersistedBatch.ARCHIVED, (short) 1));
    }

    // Renew -------------------------------------------------------------------------------

    @Test
    void shouldExtendLockOnRenewAndKeepOthersOut() {
        fetch("m1", 10, 0);

        AckResult r = sp.acknowledge("m1", List.of(AckBatch.of(0, 4, RENEW)), 900);

        assertThat(r.isError()).isFalse();
        assertThat(r.pending().write()).isEmpty();
        sp.commit(r.pending());
        sp.expireLocks(LOCK_MS);
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.stateOf(5)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.nextDeadlineMs()).isEqualTo(900 + LOCK_MS);
        assertThat(fetch("m2", 100, LOCK_MS)).containsExactly(range(5, 9, 2), range(10, 29, 1));
        assertThat(sp.ownerOf(0)).isEqualTo("m1");
        assertThat(ack("m1", 0, 4, ACCEPT, 1_500)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldRefuseRenewWhenDisabled() {
        config = new ShareConfig(LOCK_MS, 5, 100, false);
        fetch("m1", 10, 0);

        assertThat(ack("m1", 0, 4, RENEW, 500)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.nextDeadlineMs()).isEqualTo(LOCK_MS);
    }

    @Test
    void shouldRefuseRenewFromNonOwner() {
        fetch("m1", 10, 0);

        assertThat(ack("m2", 0, 4, RENEW, 500)).isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    // Release, log start, rollback --------------------------------------------------------

    @Test
    void shouldReleaseAllRecordsOfMemberKeepingDeliveryCount() {
        fetch("m1", 10, 0);
        fetch("m2", 10, 0);

        PendingChange change = sp.releaseMember("m1", 5).orElseThrow();
        assertThat(change.write().orElseThrow().batches())
                .containsExactly(new PersistedBatch(0, 9, PersistedBatch.AVAILABLE, (short) 1));
        sp.commit(change);

        assertThat(sp.stateOf(0)).isEqualTo(RecordState.AVAILABLE);
        assertThat(sp.deliveryCountOf(0)).isEqualTo((short) 1);
        assertThat(sp.stateOf(10)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.releaseMember("m3", 5)).isEmpty();
        assertThat(fetch("m3", 10, 6)).containsExactly(range(0, 9, 2));
    }

    @Test
    void shouldArchiveAvailableRecordsWhenLogStartOffsetMoves() {
        fetch("m1", 20, 0);
        ack("m1", 0, 9, RELEASE, 1);

        sp.onLogStartOffsetMoved(5);

        assertThat(sp.startOffset()).isEqualTo(5);
        assertThat(sp.stateOf(4)).isNull();
        assertThat(sp.nextFetchOffset()).isEqualTo(5);
        assertThat(ack("m1", 10, 12, ACCEPT, 2)).isEqualTo(Errors.NONE);

        sp.onLogStartOffsetMoved(50);
        assertThat(sp.startOffset()).isEqualTo(50);
        assertThat(sp.endOffset()).isEqualTo(50);
        assertThat(sp.inFlightRecords()).isZero();
        assertThat(ack("m1", 13, 19, ACCEPT, 3)).as("gone with the log, as in Kafka")
                .isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldRestoreAcquiredStateOnRollback() {
        InMemorySharePersister persister = new InMemorySharePersister();
        persister.initialize(KEY, 0).join();
        fetch("m1", 10, 0);
        AckResult r = sp.acknowledge("m1", List.of(AckBatch.of(0, 9, ACCEPT)), 1);
        persister.failNextWrites(1);

        boolean failed = persister.write(r.pending().write().orElseThrow()).isCompletedExceptionally();
        assertThat(failed).isTrue();
        sp.rollback(r.pending());

        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ACQUIRED);
        assertThat(sp.inTransition(0)).isFalse();
        assertThat(ack("m1", 0, 9, ACCEPT, 2)).isEqualTo(Errors.NONE);
        assertThat(persister.read(KEY).batches()).isEmpty();
        assertThatThrownBy(() -> sp.commit(r.pending())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldMakeRecordsAvailableOnRollbackWhenLockExpiredMeanwhile() {
        config = new ShareConfig(LOCK_MS, 2, 100, true);
        fetch("m1", 10, 0);
        AckResult r = sp.acknowledge("m1", List.of(AckBatch.of(0, 9, ACCEPT)), 1);
        assertThat(sp.expireLocks(LOCK_MS)).isEmpty();

        sp.rollback(r.pending());

        assertThat(sp.stateOf(0)).isEqualTo(RecordState.AVAILABLE);
        assertThat(fetch("m2", 10, LOCK_MS + 1)).containsExactly(range(0, 9, 2));
        AckResult r2 = sp.acknowledge("m2", List.of(AckBatch.of(0, 9, ACCEPT)), LOCK_MS + 2);
        sp.expireLocks(3 * LOCK_MS);
        sp.rollback(r2.pending());
        assertThat(sp.startOffset()).isEqualTo(10);
    }

    // Throttling and loading --------------------------------------------------------------

    @Test
    void shouldThrottleRedeliveryNearDeliveryLimit() {
        log = TestLog.ofBatchSizes(8, 8);
        config = new ShareConfig(LOCK_MS, 5, 100, true);
        assertThat(config.throttleThreshold()).isEqualTo(3);
        long now = 0;
        for (int delivery = 1; delivery <= 3; delivery++) {
            assertThat(fetch("m1", 8, now)).containsExactly(range(0, 7, delivery));
            ack("m1", 0, 7, RELEASE, ++now);
        }
        // Count 3 reached the threshold: halve the batch.
        assertThat(fetch("m1", 8, now)).containsExactly(range(0, 3, 4));
        assertThat(fetch("m1", 8, now)).containsExactly(range(4, 7, 4));
        ack("m1", 0, 7, RELEASE, ++now);
        // Count 4 is the last attempt: one record at a time.
        assertThat(fetch("m1", 8, now)).containsExactly(range(0, 0, 5));
        assertThat(fetch("m1", 8, now)).containsExactly(range(1, 1, 5));
        ack("m1", 0, 1, RELEASE, ++now);
        assertThat(sp.startOffset()).isEqualTo(2);
    }

    @Test
    void shouldNotMixThrottledRecordsWithFresherOnes() {
        log = TestLog.ofBatchSizes(4, 4);
        config = new ShareConfig(LOCK_MS, 4, 100, true);
        fetch("m1", 8, 0);
        ack("m1", 0, 7, RELEASE, 1);
        fetch("m1", 8, 1);
        ack("m1", 0, 3, ACCEPT, 2);
        ack("m1", 4, 7, RELEASE, 2);

        // 4..7 have count 2 = threshold for limit 4: budget 8 >> 1 = 4.
        assertThat(fetch("m1", 8, 3)).containsExactly(range(4, 7, 3));
    }

    @Test
    void shouldLoadFromPersistedStateAndFetchGapsFirst() {
        ShareState state = new ShareState(3, 10, List.of(
                new PersistedBatch(10, 11, PersistedBatch.ACKNOWLEDGED, (short) 1),
                new PersistedBatch(15, 16, PersistedBatch.AVAILABLE, (short) 2),
                new PersistedBatch(17, 18, PersistedBatch.ARCHIVED, (short) 5)));

        sp = SharePartition.load(KEY, state, () -> config);

        assertThat(sp.stateEpoch()).isEqualTo(3);
        assertThat(sp.startOffset()).isEqualTo(12);
        assertThat(sp.endOffset()).isEqualTo(18);
        assertThat(sp.nextFetchOffset()).isEqualTo(12);
        assertThat(fetch("m1", 100, 0)).containsExactly(range(12, 14, 1), range(15, 16, 3), range(19, 29, 1));
    }

    @Test
    void shouldRefuseToLoadBatchesBelowStartOffset() {
        ShareState bad = new ShareState(0, 10, List.of(new PersistedBatch(5, 12, PersistedBatch.AVAILABLE, (short) 1)));

        assertThatThrownBy(() -> SharePartition.load(KEY, bad, () -> config))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRoundTripThroughPersister() {
        InMemorySharePersister persister = new InMemorySharePersister();
        persister.initialize(KEY, 0).join();
        fetch("m1", 20, 0);
        AckResult r = sp.acknowledge("m1", List.of(AckBatch.of(0, 4, ACCEPT), AckBatch.of(5, 6, RELEASE)), 1);
        persister.write(r.pending().write().orElseThrow()).join();
        sp.commit(r.pending());
        sp.expireLocks(LOCK_MS).ifPresent(w -> persister.write(w).join());

        SharePartition reloaded = SharePartition.load(KEY, persister.read(KEY), () -> config);

        assertThat(reloaded.startOffset()).isEqualTo(5);
        assertThat(reloaded.stateOf(5)).isEqualTo(RecordState.AVAILABLE);
        assertThat(reloaded.deliveryCountOf(5)).isEqualTo((short) 1);
        assertThat(reloaded.endOffset()).isEqualTo(19);
        assertThat(reloaded.recordCount(RecordState.ACQUIRED)).isZero();
    }

    @Test
    void shouldArchiveInsteadOfAcquiringWhenLimitWasLowered() {
        fetch("m1", 10, 0);
        ack("m1", 0, 9, RELEASE, 1);
        fetch("m1", 10, 2);
        ack("m1", 0, 9, RELEASE, 3);
        config = new ShareConfig(LOCK_MS, 2, 100, true);

        List<AcquiredRange> got = fetch("m1", 10, 4);

        assertThat(got).containsExactly(range(10, 19, 1));
        assertThat(sp.startOffset()).isEqualTo(10);
    }

    @Test
    void shouldCountTerminalRecordsAsDeliveryComplete() {
        fetch("m1", 10, 0);
        ack("m1", 3, 4, ACCEPT, 1);
        ack("m1", 6, 6, REJECT, 1);

        assertThat(sp.deliveryCompleteCount()).isEqualTo(3);
        ack("m1", 0, 2, ACCEPT, 2);
        assertThat(sp.deliveryCompleteCount()).isEqualTo(1);
    }

    @Test
    void shouldPersistResolvedStartOffsetOfFreshPartition() {
        InMemorySharePersister persister = new InMemorySharePersister();
        persister.initialize(KEY, -1).join();
        assertThat(persister.read(KEY).startOffset()).isEqualTo(-1);
        sp = SharePartition.fresh(KEY, persister.read(KEY).stateEpoch(), 42, () -> config);

        persister.write(sp.startOffsetWrite()).join();

        assertThat(persister.read(KEY).startOffset()).isEqualTo(42);
        assertThat(SharePartition.load(KEY, persister.read(KEY), () -> config).nextFetchOffset()).isEqualTo(42);
    }
}
