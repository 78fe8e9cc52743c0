package io.pier.log;

import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.sized;
import static io.pier.log.TestBatches.values;
import static io.pier.log.TestBatches.valuesOf;
import static io.pier.log.TestBatches.withSegmentBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A flush cut in three (begin on the owner, force anywhere, complete on the owner), with the
 * owner's other work (appends, rolls, retention, DeleteRecords, close) in between, as a shard
 * and its flusher interleave them. Every step is called by hand, so each interleaving is exact.
 */
class LogFlushTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (PartitionLog log : opened) {
            try {
                log.close();
            } catch (RuntimeException e) {
                // a test that simulated a crash leaves logs that cannot be closed cleanly
            }
        }
    }

    private Path dir() {
        return tmp.resolve("t-0");
    }

    private PartitionLog open(LogConfig config, FileIO io) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config, clock, io);
        opened.add(log);
        return log;
    }

    @Test
    void shouldMoveTheHighWatermarkOnlyToWhatTheForceCoveredAndLeaveLaterAppendsForTheNextFlush() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE), FileIO.REAL);
        log.append(values(T0, "a", "b"));

        // Given a flush begun, and an append after it
        LogFlush flush = log.beginFlush();
        log.append(values(T0, "c"));
        assertThat(flush.end()).isEqualTo(2);
        assertThatThrownBy(log::beginFlush).as("one flush in flight at a time")
                .isInstanceOf(IllegalStateException.class);

        // When it is forced (on any thread) and completed
        LogFlush.Forced forced = flush.force();
        assertThat(log.highWatermark()).as("not before the owner hears of it").isZero();
        log.completeFlush(flush, forced);

        // Then the high watermark covers what it forced, and the later append waits for the next
        assertThat(log.highWatermark()).isEqualTo(2);
        assertThat(log.hasUnflushedData()).isTrue();
        LogFlush next = log.beginFlush();
        log.completeFlush(next, next.force());
        assertThat(log.highWatermark()).isEqualTo(3);
        assertThat(log.beginFlush()).as("nothing left to force").isNull();
    }

    @Test
    void shouldHaveNothingToForceWithoutDurability() throws IOException {
        PartitionLog log = open(config(Durability.NONE), FileIO.REAL);
        log.append(values(T0, "a"));
        assertThat(log.beginFlush()).isNull();
        assertThat(log.highWatermark()).isEqualTo(1);
    }

    @Test
    void shouldNeverLetTheRecoveryPointClaimBytesWrittenAfterTheFlushBegan() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        PartitionLog log = open(config(Durability.DURABLE), io);
        log.append(values(T0, "a"));
        clock.advance(PartitionLog.RECOVERY_POINT_INTERVAL_MS); // the next flush writes a recovery point

        // Given a flush begun, then an append the force may or may not cover
        LogFlush flush = log.beginFlush();
        log.append(values(T0, "b"));
        RecoveryPoint before = RecoveryPoint.read(dir());
        log.completeFlush(flush, flush.force());
        RecoveryPoint written = RecoveryPoint.read(dir());

        // Then the point covers "a" alone, however much the force happened to write
        assertThat(written).isNotEqualTo(before);
        assertThat(written.position()).isEqualTo(values(T0, "a").sizeInBytes());

        // And after a power loss that tears "b", the log opens with "a" (no damage in the synced region)
        log.append(values(T0, "c"));
        io.powerLoss(new java.util.Random(1));
        opened.remove(log);
        try (PartitionLog reopened = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(valuesOf(reopened.read(0, 1 << 20, false).records())).startsWith("a");
        }
    }

    @Test
    void shouldCompleteAFlushWhoseSegmentWasDeletedUnderItsForceWithoutWritingTheRecoveryPoint()
            throws IOException {
        // Given segments written without durability (so none was forced), then durability switched on
        LogConfig none = withSegmentBytes(config(Durability.NONE), 200);
        PartitionLog log = open(none, FileIO.REAL);
        for (int i = 0; i < 4; i++) {
            log.append(sized(T0, 100)); // one batch per segment
        }
        log.updateConfig(withSegmentBytes(config(Durability.DURABLE), 200));
        log.append(sized(T0, 100));
        clock.advance(PartitionLog.RECOVERY_POINT_INTERVAL_MS);
        RecoveryPoint before = RecoveryPoint.read(dir());

        // ...and a flush begun that forces the old segments too
        LogFlush flush = log.beginFlush();
        assertThat(flush.segmentCount()).isEqualTo(5);

        // When DeleteRecords deletes three of them before the force runs
        assertThat(log.deleteRecordsBefore(3)).isEqualTo(3);
        assertThat(log.segmentCount()).isEqualTo(2);
        LogFlush.Forced forced = flush.force();

        // Then the force is no failure, the flush completes for what is left of the log...
        assertThat(forced.failure()).isNull();
        log.completeFlush(flush, forced);
        assertThat(log.highWatermark()).isEqualTo(5);
        assertThat(log.hasUnflushedData()).isFalse();
        // ...and the recovery point, which would have claimed the deleted segments forced, is not written
        assertThat(RecoveryPoint.read(dir())).isEqualTo(before);
    }

    @Test
    void shouldRefuseToConfirmAFlushWhoseSegmentWasClosedWhileStillInTheLog() throws IOException {
        List<FileChannel> channels = new ArrayList<>();
        FileIO recording = new FileIO() {
            @Override
            public FileChannel open(Path path, boolean create) throws IOException {
                FileChannel ch = FileIO.REAL.open(path, create);
                channels.add(ch);
                return ch;
            }
        };
        PartitionLog log = open(config(Durability.DURABLE), recording);
        log.append(values(T0, "a"));
        LogFlush flush = log.beginFlush();

        // When the segment's channel is closed behind the log's back (an interrupted reader would)
        channels.get(channels.size() - 1).close();
        LogFlush.Forced forced = flush.force();

        // Then nothing is confirmed, and the log refuses further writes
        assertThatThrownBy(() -> log.completeFlush(flush, forced)).isInstanceOf(IOException.class)
                .hasMessageContaining("closed before it was forced");
        assertThat(log.highWatermark()).isZero();
        assertThatThrownBy(() -> log.append(values(T0, "b"))).isInstanceOf(IOException.class);
    }

    @Test
    void shouldFailTheFlushAndRefuseWritesWhenTheForceFails() throws IOException {
        FileIO failing = new FileIO() {
            @Override
            public FileChannel open(Path path, boolean create) throws IOException {
                return FileIO.REAL.open(path, create);
            }

            @Override
            public void crashPoint(CrashPoint point) throws IOException {
                if (point == CrashPoint.AFTER_APPEND_BEFORE_FSYNC) {
                    throw new IOException("injected fsync failure");
                }
            }
        };
        PartitionLog log = open(config(Durability.DURABLE), failing);
        log.append(values(T0, "a"));
        LogFlush flush = log.beginFlush();

        LogFlush.Forced forced = flush.force();

        assertThat(forced.failure()).hasMessage("injected fsync failure");
        assertThatThrownBy(() -> log.completeFlush(flush, forced)).isSameAs(forced.failure());
        assertThat(log.highWatermark()).isZero();
        assertThatThrownBy(log::beginFlush).as("never retried").isInstanceOf(IOException.class);
        assertThatThrownBy(() -> log.append(values(T0, "b"))).isInstanceOf(IOException.class);
    }

    @Test
    void shouldConfirmNothingOnceTheLogClosedUnderAFlushAndLeaveTheRecoveryPointToIt() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE), FileIO.REAL);
        log.append(values(T0, "a"));
        clock.advance(PartitionLog.RECOVERY_POINT_INTERVAL_MS);
        LogFlush flush = log.beginFlush();
        RecoveryPoint before = RecoveryPoint.read(dir());

        // When the log closes (the broker stops) before the force runs
        log.close();
        LogFlush.Forced forced = flush.force();

        // Then close forced the data but left the recovery point alone (the flush is its writer),
        // the flush could force nothing so wrote none, and its completion confirms nothing
        assertThat(forced.failure()).isNull();
        assertThat(RecoveryPoint.read(dir())).isEqualTo(before);
        assertThatThrownBy(() -> log.completeFlush(flush, forced)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldFireTheCrashPointsAroundTheForceAndConfirmNothingAtTheFirst() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        PartitionLog log = open(config(Durability.DURABLE), io);
        log.append(values(T0, "a"));
        log.flush();
        log.append(values(T0, "b"));

        // Given a crash armed between append and fsync, on the thread that forces
        io.arm(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 1);
        LogFlush flush = log.beginFlush();
        LogFlush.Forced forced = flush.force();

        // Then the force reports it, nothing new is confirmed, and a power loss keeps what was
        assertThat(forced.failure()).isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
        assertThatThrownBy(() -> log.completeFlush(flush, forced)).isInstanceOf(IOException.class);
        assertThat(log.highWatermark()).isEqualTo(1);
        io.powerLoss(null);
        opened.remove(log);
        try (PartitionLog reopened = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(valuesOf(reopened.read(0, 1 << 20, false).records())).containsExactly("a");
        }
    }

    @Test
    void shouldFireTheCrashPointAfterTheFsyncOnTheOwnerBeforeAnythingIsAnswered() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        PartitionLog log = open(config(Durability.DURABLE), io);
        log.append(values(T0, "a"));
        io.arm(CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE, 1);
        LogFlush flush = log.beginFlush();
        LogFlush.Forced forced = flush.force();
        assertThat(forced.failure()).isNull();

        assertThatThrownBy(() -> log.completeFlush(flush, forced))
                .isInstanceOf(PowerLossFileIO.SimulatedCrash.class);

        // The data was forced: a power loss right there keeps it
        io.powerLoss(null);
        opened.remove(log);
        try (PartitionLog reopened = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(valuesOf(reopened.read(0, 1 << 20, false).records())).containsExactly("a");
        }
    }

    @Test
    void shouldLeaveTheRolledSegmentsTailToTheNextFlush() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        PartitionLog log = open(withSegmentBytes(config(Durability.DURABLE), 200), io);
        log.append(sized(T0, 100));
        long syncs = io.syncs();

        // When an append rolls the segment, nothing is forced on the owner's thread
        log.append(sized(T0, 100));
        assertThat(log.segmentCount()).isEqualTo(2);
        assertThat(io.syncs()).isEqualTo(syncs);

        // The next flush forces both segments, and then both batches survive a power loss
        LogFlush flush = log.beginFlush();
        assertThat(flush.segmentCount()).isEqualTo(2);
        log.completeFlush(flush, flush.force());
        assertThat(log.highWatermark()).isEqualTo(2);
        io.powerLoss(null);
        opened.remove(log);
        try (PartitionLog reopened = PartitionLog.open(dir(), withSegmentBytes(config(Durability.DURABLE), 200),
                clock)) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
        }
    }
}
