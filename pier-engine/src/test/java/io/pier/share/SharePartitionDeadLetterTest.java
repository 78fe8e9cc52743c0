package io.pier.share;

import static io.pier.share.AcknowledgeType.ACCEPT;
import static io.pier.share.AcknowledgeType.GAP;
import static io.pier.share.AcknowledgeType.REJECT;
import static io.pier.share.AcknowledgeType.RELEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateWrite;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** ARCHIVING (KIP-1191): what dies with a dead-letter queue waits for its dead letter. */
class SharePartitionDeadLetterTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long LOCK_MS = 1_000;

    private ShareConfig config = new ShareConfig(LOCK_MS, 3, 100, true, true);
    private final TestLog log = TestLog.ofBatchSizes(10, 10);
    private SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config);

    private List<AcquiredRange> fetch(String member, int maxRecords, long nowMs) {
        long from = sp.nextFetchOffset();
        return sp.acquire(member, from, log.read(from),
                new AcquireLimits(maxRecords, 500, AcquireMode.RECORD_LIMIT), nowMs);
    }

    private ShareStateWrite ack(String member, long first, long last, AcknowledgeType type) {
        AckResult r = sp.acknowledge(member, List.of(AckBatch.of(first, last, type)), 0);
        assertThat(r.isError()).as("ack error %s", r.isError() ? r.error() : Errors.NONE).isFalse();
        sp.commit(r.pending());
        return r.pending().write().orElseThrow();
    }

    @Test
    void shouldHoldARejectedRecordInArchivingUntilItsDeadLetterIsRecorded() {
        fetch("m1", 3, 0);
        ShareStateWrite written = ack("m1", 0, 0, REJECT);
        ack("m1", 1, 2, ACCEPT);

        assertThat(written.batches()).containsExactly(new PersistedBatch(0, 0, PersistedBatch.ARCHIVING, (short) 1));
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ARCHIVING);
        assertThat(sp.startOffset()).as("the start offset waits for the dead letter").isZero();
        assertThat(sp.deadLettersWaiting()).isEqualTo(1);

        DeadLetterBatch batch = sp.takeDeadLetters(10).orElseThrow();
        assertThat(batch.letters()).containsExactly(
                new DeadLetterBatch.Letter(0, (short) 1, DeadLetterBatch.Reason.REJECTED, false));
        assertThat(sp.takeDeadLetters(10)).as("taken records are not taken twice").isEmpty();
        assertThat(batch.change().write().orElseThrow().batches())
                .containsExactly(new PersistedBatch(0, 0, PersistedBatch.ARCHIVED, (short) 1));

        sp.commit(batch.change());
        assertThat(sp.stateOf(0)).isNull();
        assertThat(sp.startOffset()).isEqualTo(3);
        assertThat(sp.deadLettersWaiting()).isZero();
    }

    @Test
    void shouldSendARecordReleasedAtItsLastDeliveryToTheDeadLetterQueue() {
        for (int delivery = 1; delivery <= 3; delivery++) {
            assertThat(fetch("m1", 1, delivery)).containsExactly(new AcquiredRange(0, 0, (short) delivery));
            ack("m1", 0, 0, RELEASE);
        }
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ARCHIVING);
        assertThat(fetch("m1", 1, 10)).as("the next record flows").containsExactly(new AcquiredRange(1, 1, (short) 1));
        assertThat(sp.takeDeadLetters(10).orElseThrow().letters()).containsExactly(
                new DeadLetterBatch.Letter(0, (short) 3, DeadLetterBatch.Reason.DELIVERY_LIMIT, false));
    }

    @Test
    void shouldSendARecordWhoseLastLockExpiredToTheDeadLetterQueue() {
        for (int delivery = 1; delivery <= 3; delivery++) {
            fetch("m1", 1, delivery * 10_000L);
            assertThat(sp.expireLocks(delivery * 10_000L + LOCK_MS)).isPresent();
        }
        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ARCHIVING);
        assertThat(sp.takeDeadLetters(1).orElseThrow().letters().get(0).reason())
                .isEqualTo(DeadLetterBatch.Reason.DELIVERY_LIMIT);
    }

    @Test
    void shouldKeepARecordArchivingWhenItsDeadLetterWentUnrecorded() {
        fetch("m1", 1, 0);
        ack("m1", 0, 0, REJECT);
        sp.rollback(sp.takeDeadLetters(10).orElseThrow().change());

        assertThat(sp.stateOf(0)).isEqualTo(RecordState.ARCHIVING);
        assertThat(sp.takeDeadLetters(10)).as("taken again").isPresent();
    }

    @Test
    void shouldResumeArchivingRecordsAfterALoad() {
        ShareState stored = new ShareState(0, 0, List.of(
                new PersistedBatch(0, 0, PersistedBatch.ARCHIVING, (short) 1),
                new PersistedBatch(1, 1, PersistedBatch.ACKNOWLEDGED, (short) 1),
                new PersistedBatch(2, 2, PersistedBatch.ARCHIVING, (short) 3)));
        sp = SharePartition.load(KEY, stored, () -> config);

        assertThat(sp.startOffset()).isZero();
        assertThat(sp.deadLettersLoaded()).extracting(DeadLetterBatch.Letter::offset).containsExactly(0L, 2L);
        assertThat(sp.takeDeadLetters(10).orElseThrow().letters()).containsExactly(
                new DeadLetterBatch.Letter(0, (short) 1, DeadLetterBatch.Reason.REJECTED, true),
                new DeadLetterBatch.Letter(2, (short) 3, DeadLetterBatch.Reason.DELIVERY_LIMIT, true));
    }

    @Test
    void shouldNotTellADeadRecordArchivedAgainWhenTheLogStartPassesIt() {
        List<String> archived = new ArrayList<>();
        sp = SharePartition.fresh(KEY, 0, 0, () -> config, new ShareEvents() {
            @Override
            public void onArchived(ArchiveCause cause, long records) {
                archived.add(cause + ":" + records);
            }
        });
        fetch("m1", 3, 0);
        ack("m1", 0, 0, REJECT);
        ack("m1", 1, 1, REJECT);
        DeadLetterBatch taken = sp.takeDeadLetters(1).orElseThrow();
        assertThat(archived).containsExactly("REJECTED:1", "REJECTED:1");

        sp.onLogStartOffsetMoved(3);

        assertThat(archived).as("0 (taken) and 1 were told archived when they died; only 2 is lost")
                .containsExactly("REJECTED:1", "REJECTED:1", "LOG_START:1");
        sp.commitDeadLetters(taken, 1);
        assertThat(archived).hasSize(3);
    }

    @Test
    void shouldArchiveAtOnceWithoutADeadLetterQueueAndNeverForGaps() {
        config = new ShareConfig(LOCK_MS, 3, 100, true, false);
        fetch("m1", 2, 0);
        ack("m1", 0, 0, REJECT);
        assertThat(sp.startOffset()).isEqualTo(1);

        config = new ShareConfig(LOCK_MS, 3, 100, true, true);
        ShareStateWrite gap = ack("m1", 1, 1, GAP);
        assertThat(gap.batches()).containsExactly(new PersistedBatch(1, 1, PersistedBatch.ARCHIVED, (short) 1));
        assertThat(sp.startOffset()).isEqualTo(2);
        assertThat(sp.takeDeadLetters(10)).isEmpty();
    }
}
