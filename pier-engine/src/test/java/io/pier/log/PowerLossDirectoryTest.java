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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Directory entries across a simulated power loss: first what {@link PowerLossFileIO} does to them
 * (a created, renamed or deleted entry whose directory was not fsynced may be undone), then what
 * the log and its checkpoints must do about it.
 */
class PowerLossDirectoryTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path root;

    private final ManualClock clock = new ManualClock(T0);

    // What the simulated disk does.

    @Test
    void shouldUndoAFileCreationWhoseDirectoryWasNotFsynced() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path kept = root.resolve("kept");
        Path lost = root.resolve("lost");
        write(io, kept, "k");
        io.syncDirectory(root);
        write(io, lost, "l"); // contents fsynced, the entry not

        io.powerLoss(null);

        assertThat(kept).hasContent("k");
        assertThat(lost).doesNotExist();
        assertThat(io.entriesUndone()).isOne();
    }

    @Test
    void shouldRevertARenameAndBringBackADeletionWhoseDirectoryWasNotFsynced() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path target = root.resolve("target");
        Path tmp = root.resolve("target.tmp");
        Path doomed = root.resolve("doomed");
        write(io, target, "old");
        write(io, doomed, "d");
        write(io, tmp, "new");
        io.syncDirectory(root);

        io.move(tmp, target);
        io.deleteIfExists(doomed);
        assertThat(target).hasContent("new");
        assertThat(doomed).doesNotExist();

        io.powerLoss(null);

        assertThat(target).hasContent("old");
        assertThat(tmp).hasContent("new");
        assertThat(doomed).hasContent("d");
    }

    @Test
    void shouldKeepEveryChangeOfADirectoryOnceItIsFsynced() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path target = root.resolve("target");
        write(io, target, "old");
        write(io, root.resolve("target.tmp"), "new");
        io.move(root.resolve("target.tmp"), target);
        io.deleteIfExists(root.resolve("nothing-there"));
        io.syncDirectory(root);

        io.powerLoss(new Random(7));

        assertThat(target).hasContent("new");
        assertThat(root.resolve("target.tmp")).doesNotExist();
        assertThat(io.entriesUndone()).isZero();
    }

    @Test
    void shouldTakeADirectoryAwayWithEverythingInItWhenItsOwnEntryIsUndone() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path dir = root.resolve("a").resolve("b");
        io.createDirectories(dir);
        write(io, dir.resolve("f"), "x");
        io.syncDirectory(dir);
        io.syncDirectory(dir.getParent()); // b is in a, but a is not durably in root

        io.powerLoss(null);

        assertThat(root.resolve("a")).doesNotExist();
    }

    @Test
    void shouldLeaveTheTargetInPlaceWhenTheFileToRenameIsMissing() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path target = root.resolve("target");
        write(io, target, "old");

        assertThatThrownBy(() -> io.move(root.resolve("missing"), target)).isInstanceOf(
                NoSuchFileException.class);

        assertThat(target).hasContent("old");
    }

    @Test
    void shouldFailEveryDirectoryOperationOnceTheMachineIsDown() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        io.powerLoss(null);

        assertThatThrownBy(() -> io.createDirectories(root.resolve("x"))).isInstanceOf(
                PowerLossFileIO.SimulatedCrash.class);
        assertThatThrownBy(() -> io.syncDirectory(root)).isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
        assertThatThrownBy(() -> io.openEmpty(root.resolve("y"))).isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
    }

    // What Pier must do about it.

    /**
     * Finding of the wider simulation: a checkpoint written into a folder that did not exist yet
     * (the broker's {@code meta} folder on its first start) was fsynced, renamed and its folder
     * fsynced, but the folder's own entry in its parent never was, so a power loss could take the
     * folder, and every topic with it.
     */
    @Test
    void shouldKeepACheckpointWrittenIntoANewFolderAcrossPowerLoss() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path file = root.resolve("meta").resolve("cluster.properties");

        AtomicFiles.write(io, file, "topics".getBytes(StandardCharsets.UTF_8));
        io.powerLoss(null);

        assertThat(file).hasContent("topics");
    }

    /** The same for a log opened in folders that do not exist yet (the broker's {@code logs} folder). */
    @Test
    void shouldKeepALogOpenedInNewNestedFoldersAcrossPowerLoss() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path dir = root.resolve("logs").resolve("topic-0");
        PartitionLog log = PartitionLog.open(dir, config(Durability.DURABLE), clock, io);
        log.append(values(T0, "a", "b"));
        log.flush();

        io.powerLoss(null);

        try (PartitionLog reopened = PartitionLog.open(dir, config(Durability.DURABLE), clock)) {
            assertThat(valuesOf(reopened.read(0, 1 << 20, false).records())).containsExactly("a", "b");
        }
    }

    @Test
    void shouldStopAtEachStepOfACheckpointWriteAndKeepTheOldOneOrTheNewOne() throws IOException {
        for (CrashPoint point : new CrashPoint[] {CrashPoint.CHECKPOINT_BEFORE_RENAME,
            CrashPoint.CHECKPOINT_BEFORE_DIRECTORY_FSYNC}) {
            PowerLossFileIO io = new PowerLossFileIO();
            Path file = root.resolve(point.name()).resolve("checkpoint");
            AtomicFiles.write(io, file, "old".getBytes(StandardCharsets.UTF_8));
            io.arm(point, 1);

            assertThatThrownBy(() -> AtomicFiles.write(io, file, "new".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
            io.powerLoss(null);

            assertThat(file).as("at %s", point).hasContent("old");
        }
    }

    /**
     * DeleteRecords makes the new log start offset durable before it deletes a segment, so
     * segments a power loss brings back (their deletion not yet fsynced in the folder) stay below
     * the start and are never served again.
     */
    @Test
    void shouldKeepTheLogStartWhenDeletedSegmentsComeBackAfterPowerLoss() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        Path dir = root.resolve("p-0");
        LogConfig config = withSegmentBytes(config(Durability.DURABLE), 200);
        PartitionLog log = PartitionLog.open(dir, config, clock, io);
        for (int i = 0; i < 6; i++) {
            log.append(sized(T0, 100)); // one batch per segment
        }
        log.flush();
        io.arm(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, 1);

        assertThatThrownBy(() -> log.deleteRecordsBefore(4)).isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
        io.powerLoss(null);

        try (PartitionLog reopened = PartitionLog.open(dir, config, clock)) {
            assertThat(reopened.segmentCount()).as("the deletions were undone").isEqualTo(6);
            assertThat(reopened.logStartOffset()).isEqualTo(4);
            assertThat(reopened.logEndOffset()).isEqualTo(6);
            assertThat(reopened.read(4, 1 << 20, false).records().batches().iterator().next().baseOffset())
                    .isEqualTo(4);
        }
    }

    private static void write(FileIO io, Path file, String content) throws IOException {
        try (FileChannel ch = io.openEmpty(file)) {
            ByteBuffer buf = ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8));
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
    }
}
