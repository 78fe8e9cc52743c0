package io.pier.log;

import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.offsetsOf;
import static io.pier.log.TestBatches.values;
import static io.pier.log.TestBatches.valuesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.kafka.common.compress.Compression;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogRecoveryTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);

    private Path dir() {
        return tmp.resolve("topic-0");
    }

    private Path firstLog() {
        return dir().resolve("00000000000000000000.log");
    }

    /** Three batches (offsets 0..5), flushed, then the process "dies" without a checkpoint. */
    private long[] writeAndCrash(LogConfig config) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config, clock);
        long[] ends = new long[3];
        for (int i = 0; i < 3; i++) {
            log.append(values(T0, "v" + (2 * i), "v" + (2 * i + 1)));
            ends[i] = Files.size(firstLog());
        }
        log.flush(); // within the checkpoint interval: the recovery point still says 0 bytes
        log.closeAbruptly();
        return ends;
    }

    @Test
    void shouldTruncateTornTailOnRecovery() throws IOException {
        long[] ends = writeAndCrash(config(Durability.DURABLE));
        try (FileChannel ch = FileChannel.open(firstLog(), StandardOpenOption.WRITE)) {
            ch.truncate(ends[1] + 10); // the third batch is half written
        }

        try (PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(log.logEndOffset()).isEqualTo(4);
            assertThat(log.highWatermark()).isEqualTo(4);
            assertThat(Files.size(firstLog())).isEqualTo(ends[1]);
            assertThat(log.append(values(T0, "new")).baseOffset()).as("offset 4 is reused, not skipped").isEqualTo(4);
            log.flush();
            assertThat(valuesOf(log.read(0, 1 << 20, false).records()))
                    .containsExactly("v0", "v1", "v2", "v3", "new");
        }
    }

    @Test
    void shouldTruncateGarbageAfterLastBatch() throws IOException {
        long[] ends = writeAndCrash(config(Durability.NONE));
        try (FileChannel ch = FileChannel.open(firstLog(), StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(new byte[] {0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 99, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
        }

        try (PartitionLog log = PartitionLog.open(dir(), config(Durability.NONE), clock)) {
            assertThat(log.logEndOffset()).isEqualTo(6);
            assertThat(Files.size(firstLog())).isEqualTo(ends[2]);
            assertThat(log.append(values(T0, "x")).baseOffset()).isEqualTo(6);
        }
    }

    @Test
    void shouldTruncateAtCorruptBatchBeyondRecoveryPointAndDropLaterSegments() throws IOException {
        LogConfig config = TestBatches.withSegmentBytes(config(Durability.NONE), 200);
        PartitionLog log = PartitionLog.open(dir(), config, clock);
        for (int i = 0; i < 6; i++) {
            log.append(values(T0, "a" + (2 * i), "a" + (2 * i + 1))); // two batches per segment
        }
        assertThat(log.segmentCount()).isEqualTo(3);
        log.closeAbruptly();
        Path middle = dir().resolve("00000000000000000004.log");
        flipByte(middle, (int) Files.size(middle) - 3); // payload of the segment's second batch

        try (PartitionLog reopened = PartitionLog.open(dir(), config, clock)) {
            assertThat(reopened.logEndOffset()).isEqualTo(6);
            assertThat(reopened.segmentCount()).isEqualTo(2);
            assertThat(dir().resolve("00000000000000000008.log")).doesNotExist();
            assertThat(reopened.append(values(T0, "b")).baseOffset()).isEqualTo(6);
        }
    }

    @Test
    void shouldRefuseToOpenWhenFsyncedDataIsCorrupt() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock);
        log.append(values(T0, "a", "b"));
        log.append(values(T0, "c", "d"));
        log.flush();
        log.close(); // the recovery point now covers both batches
        flipByte(firstLog(), (int) Files.size(firstLog()) - 2);

        assertThatThrownBy(() -> PartitionLog.open(dir(), config(Durability.DURABLE), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("00000000000000000000.log")
                .hasMessageContaining("position");
    }

    @Test
    void shouldRefuseToOpenWhenFsyncedDataIsMissing() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock);
        log.append(values(T0, "a", "b"));
        log.append(values(T0, "c", "d"));
        log.close();
        try (FileChannel ch = FileChannel.open(firstLog(), StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - 5);
        }

        assertThatThrownBy(() -> PartitionLog.open(dir(), config(Durability.DURABLE), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("00000000000000000000.log");
    }

    @Test
    void shouldRebuildMissingAndGarbledIndexes() throws IOException {
        LogConfig config = new LogConfig(1 << 20, Long.MAX_VALUE, -1, -1, 1 << 20, 50, false, Durability.NONE);
        PartitionLog log = PartitionLog.open(dir(), config, clock);
        for (int i = 0; i < 50; i++) {
            log.append(TestBatches.withTimestamps(Compression.NONE, T0 + i));
        }
        log.close();
        Path index = dir().resolve("00000000000000000000.index");
        Path timeIndex = dir().resolve("00000000000000000000.timeindex");
        byte[] goodIndex = Files.readAllBytes(index);
        byte[] goodTimeIndex = Files.readAllBytes(timeIndex);
        assertThat(goodIndex).hasSizeGreaterThan(8 * 10);
        Files.delete(index);
        Files.write(timeIndex, new byte[] {7, 7, 7, 7, 7});

        try (PartitionLog reopened = PartitionLog.open(dir(), config, clock)) {
            assertThat(Files.readAllBytes(index)).isEqualTo(goodIndex);
            assertThat(Files.readAllBytes(timeIndex)).isEqualTo(goodTimeIndex);
            assertThat(offsetsOf(reopened.read(33, 1, true).records())).containsExactly(33L);
            assertThat(reopened.offsetForTimestamp(T0 + 40)).isEqualTo(new OffsetAndTimestamp(40, T0 + 40));
        }
    }

    @Test
    void shouldStartAfreshWhenDataBelowStoredLogStartWasLost() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config(Durability.NONE), clock);
        log.append(values(T0, "a", "b", "c"));
        log.deleteRecordsBefore(3);
        log.closeAbruptly();
        try (FileChannel ch = FileChannel.open(firstLog(), StandardOpenOption.WRITE)) {
            ch.truncate(0); // the OS lost the unsynced batch
        }

        try (PartitionLog reopened = PartitionLog.open(dir(), config(Durability.NONE), clock)) {
            assertThat(reopened.logStartOffset()).isEqualTo(3);
            assertThat(reopened.logEndOffset()).isEqualTo(3);
            assertThat(reopened.append(values(T0, "d")).baseOffset()).isEqualTo(3);
        }
    }

    @Test
    void shouldMoveRecoveryPointOnFlushAtMostEveryFewSeconds() throws IOException {
        try (PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            log.append(values(T0, "a"));
            log.flush();
            assertThat(RecoveryPoint.read(dir())).isEqualTo(new RecoveryPoint(0, 0));

            clock.advance(PartitionLog.RECOVERY_POINT_INTERVAL_MS);
            log.append(values(T0, "b"));
            log.flush();
            assertThat(RecoveryPoint.read(dir())).isEqualTo(new RecoveryPoint(0, (int) Files.size(firstLog())));
        }
    }

    private static void flipByte(Path file, int position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, position);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            ch.write(b.rewind(), position);
        }
    }
}
