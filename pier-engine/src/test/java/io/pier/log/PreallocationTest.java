package io.pier.log;

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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log whose active file is kept ahead of its data with zeros: files end where their data does
 * once a segment is rolled or the log closed, and recovery after a crash takes a zero tail for
 * the end of the data, in the last segment and in an earlier one, without losing a record or
 * mistaking lost fsynced data for zeros.
 */
class PreallocationTest {
    private static final long T0 = 1_700_000_000_000L;
    private static final int CHUNK = 64 * 1024;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);

    private Path dir() {
        return tmp.resolve("state-0");
    }

    private Path segmentFile(long base) {
        return dir().resolve(LogSegment.fileName(base, LogSegment.LOG_SUFFIX));
    }

    private static LogConfig preallocated(long segmentBytes) {
        LogConfig d = TestBatches.config(Durability.DURABLE);
        return new LogConfig(segmentBytes, d.segmentMs(), d.retentionMs(), d.retentionBytes(), d.maxMessageBytes(),
                d.indexIntervalBytes(), false, Durability.DURABLE, CleanupPolicy.DELETE, CHUNK);
    }

    private static List<String> allValues(PartitionLog log) throws IOException {
        List<String> out = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.highWatermark()) {
            List<String> got = valuesOf(log.read(offset, 1 << 20, false).records());
            out.addAll(got);
            offset += got.size();
        }
        return out;
    }

    @Test
    void shouldKeepTheActiveFileAheadOfItsDataAndCutItOnClose() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), preallocated(1 << 20), clock);
        log.append(values(T0, "a", "b"));
        log.flush();
        long dataBytes = log.sizeInBytes();

        assertThat(Files.size(segmentFile(0))).as("one chunk of zeros ahead of the data").isEqualTo(CHUNK);
        log.close();

        assertThat(Files.size(segmentFile(0))).isEqualTo(dataBytes);
        try (PartitionLog reopened = PartitionLog.open(dir(), preallocated(1 << 20), clock)) {
            assertThat(allValues(reopened)).containsExactly("a", "b");
        }
    }

    @Test
    void shouldGrowByAChunkWhenTheZerosRunOutAndNeverPastTheSegmentSize() throws IOException {
        try (PartitionLog log = PartitionLog.open(dir(), preallocated(100 * 1024), clock)) {
            int appended = 0;
            while (log.sizeInBytes() < CHUNK + 1000) {
                log.append(TestBatches.sized(T0, 900));
                appended++;
            }
            log.flush();

            assertThat(log.segmentCount()).isEqualTo(1);
            assertThat(Files.size(segmentFile(0))).as("a second chunk, cut at segment.bytes").isEqualTo(100 * 1024);
            assertThat(log.logEndOffset()).isEqualTo(appended);
        }
    }

    @Test
    void shouldCutTheZerosOfARolledSegment() throws IOException {
        try (PartitionLog log = PartitionLog.open(dir(), preallocated(4096), clock)) {
            for (int i = 0; i < 8; i++) {
                log.append(TestBatches.sized(T0, 900));
            }
            log.flush();

            assertThat(log.segmentCount()).isGreaterThan(1);
            assertThat(Files.size(segmentFile(0))).as("the rolled segment ends with its data")
                    .isLessThanOrEqualTo(4096)
                    .isEqualTo(dataEnd(segmentFile(0)));
        }
    }

    @Test
    void shouldRecoverEveryFlushedRecordFromAFileLeftWithItsZeros() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), preallocated(1 << 20), clock);
        for (int i = 0; i < 5; i++) {
            log.append(values(T0, "v" + i));
            log.flush();
        }
        long dataBytes = log.sizeInBytes();
        log.closeAbruptly(); // the process dies: nothing cuts the zeros
        assertThat(Files.size(segmentFile(0))).isEqualTo(CHUNK);

        try (PartitionLog reopened = PartitionLog.open(dir(), preallocated(1 << 20), clock)) {
            assertThat(allValues(reopened)).containsExactly("v0", "v1", "v2", "v3", "v4");
            assertThat(Files.size(segmentFile(0))).isEqualTo(dataBytes);
            reopened.append(values(T0, "after"));
            reopened.flush();
            assertThat(allValues(reopened)).containsExactly("v0", "v1", "v2", "v3", "v4", "after");
        }
    }

    @Test
    void shouldKeepLaterSegmentsWhenAnEarlierOneStillHasZeros() throws IOException {
        LogConfig config = preallocated(4096);
        PartitionLog log = PartitionLog.open(dir(), config, clock);
        for (int i = 0; i < 8; i++) {
            log.append(values(T0, "r" + i + "-" + "x".repeat(800)));
        }
        log.flush();
        clock.advance(PartitionLog.RECOVERY_POINT_INTERVAL_MS);
        log.append(values(T0, "last"));
        log.flush(); // the recovery point now lies in a later segment than the first
        int segments = log.segmentCount();
        log.closeAbruptly();
        // A crash after the roll, before its cut of the first segment reached the disk.
        appendZeros(segmentFile(0), 10_000);

        try (PartitionLog reopened = PartitionLog.open(dir(), config, clock)) {
            assertThat(reopened.segmentCount()).isEqualTo(segments);
            assertThat(reopened.logEndOffset()).isEqualTo(9);
            assertThat(allValues(reopened)).hasSize(9).endsWith("last");
            assertThat(Files.size(segmentFile(0))).isEqualTo(dataEnd(segmentFile(0)));
        }
    }

    @Test
    void shouldStillCutAGarbledTailThatStartsWithZeros() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), preallocated(1 << 20), clock);
        log.append(values(T0, "a"));
        log.flush();
        long dataBytes = log.sizeInBytes();
        log.closeAbruptly();
        writeAt(segmentFile(0), dataBytes + 100, new byte[] {7, 7, 7});

        try (PartitionLog reopened = PartitionLog.open(dir(), preallocated(1 << 20), clock)) {
            assertThat(allValues(reopened)).containsExactly("a");
            assertThat(Files.size(segmentFile(0))).isEqualTo(dataBytes);
        }
    }

    @Test
    void shouldRefuseZerosWhereFsyncedDataWas() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), preallocated(1 << 20), clock);
        log.append(values(T0, "a", "b"));
        long firstBatchEnd = log.sizeInBytes();
        log.append(values(T0, "c", "d"));
        log.flush();
        log.close(); // the recovery point covers both batches
        long size = Files.size(segmentFile(0));
        // The disk lost the whole second batch: only zeros follow the first, as after preallocation.
        writeAt(segmentFile(0), firstBatchEnd, new byte[(int) (size - firstBatchEnd)]);

        assertThatThrownBy(() -> PartitionLog.open(dir(), preallocated(1 << 20), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("00000000000000000000.log")
                .hasMessageContaining("fsynced");
    }

    /** Where the last whole batch of a segment file ends, read with Kafka's batch reader. */
    private static long dataEnd(Path file) throws IOException {
        long end = 0;
        try (org.apache.kafka.common.record.internal.FileRecords fr =
                org.apache.kafka.common.record.internal.FileRecords.open(file.toFile(), false)) {
            for (var batch : fr.batches()) {
                end = batch.position() + batch.sizeInBytes();
            }
        }
        return end;
    }

    private static void appendZeros(Path file, int count) throws IOException {
        writeAt(file, Files.size(file), new byte[count]);
    }

    private static void writeAt(Path file, long position, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b, position + b.position());
            }
        }
    }
}
