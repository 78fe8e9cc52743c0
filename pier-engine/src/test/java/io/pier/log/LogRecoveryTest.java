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
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
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

    /**
     * Batches a crash or a bad disk may leave that pass the CRC but that Pier never writes, each
     * found by LogRecoveryFuzzTest: before, their decoding threw an IllegalArgumentException (an
     * unknown codec, an overlong varint), a NullPointerException or a BufferUnderflowException out
     * of the log's open.
     */
    static Stream<Arguments> damagedBatches() {
        byte[] commit = {0, 0, 0, 1}; // control record key: version 0, type COMMIT
        byte[] marker = {0, 0, 0, 0, 0, 0}; // end-transaction marker value: version 0, coordinator epoch 0
        return Stream.of(
                Arguments.of("compression id 5", damaged(Compression.NONE, false, 5, new byte[] {1}, new byte[] {2})),
                Arguments.of("control batch compressed", damaged(TestBatches.GZIP, true, -1, commit, marker)),
                Arguments.of("control record without a key", damaged(Compression.NONE, true, -1, null, marker)),
                Arguments.of("marker without a value", damaged(Compression.NONE, true, -1, commit, null)),
                Arguments.of("marker of 1 byte", damaged(Compression.NONE, true, -1, commit, new byte[] {0})),
                Arguments.of("marker of version -1", damaged(Compression.NONE, true, -1, commit,
                        new byte[] {-1, -1, 0, 0, 0, 0})),
                Arguments.of("control record length an overlong varint", overlongRecordLength(
                        damaged(Compression.NONE, true, -1, commit, marker))),
                // The CRC does not cover the base offset; offsets may skip ahead (a mirror's gaps),
                // never go back.
                Arguments.of("base offset going back", withBaseOffset(
                        damaged(Compression.NONE, false, -1, new byte[] {1}, new byte[] {2}), 4)));
    }

    /**
     * A mirrored log keeps its upstream's offset gaps (PartitionLog.appendMirrored): a valid batch
     * above the next expected offset is kept, in the fsynced region too, and reads from the gap find it.
     */
    @Test
    void shouldKeepABatchThatSkipsOffsetsAhead() throws IOException {
        writeAndCrash(config(Durability.DURABLE));
        Files.write(firstLog(), withBaseOffset(damaged(Compression.NONE, false, -1, new byte[] {1}, new byte[] {2}),
                10), StandardOpenOption.APPEND);
        Files.write(dir().resolve(RecoveryPoint.FILE_NAME),
                ("v1 0 " + Files.size(firstLog()) + "\n").getBytes(StandardCharsets.UTF_8));

        try (PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(log.logEndOffset()).isEqualTo(11);
            assertThat(offsetsOf(log.read(7, 1 << 20, false).records())).containsExactly(10L);
            assertThat(log.lastStableOffset()).as("its transaction replayed").isEqualTo(10);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("damagedBatches")
    void shouldCutADamagedBatchInTheUnsyncedTail(String what, byte[] batch) throws IOException {
        long[] ends = writeAndCrash(config(Durability.DURABLE));
        Files.write(firstLog(), batch, StandardOpenOption.APPEND);

        try (PartitionLog log = PartitionLog.open(dir(), config(Durability.DURABLE), clock)) {
            assertThat(log.logEndOffset()).isEqualTo(6);
            assertThat(Files.size(firstLog())).isEqualTo(ends[2]);
            assertThat(log.append(values(T0, "x")).baseOffset()).isEqualTo(6);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("damagedBatches")
    void shouldRefuseADamagedBatchInTheSyncedRegion(String what, byte[] batch) throws IOException {
        writeAndCrash(config(Durability.DURABLE));
        Files.write(firstLog(), batch, StandardOpenOption.APPEND);
        Files.write(dir().resolve(RecoveryPoint.FILE_NAME),
                ("v1 0 " + Files.size(firstLog()) + "\n").getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> PartitionLog.open(dir(), config(Durability.DURABLE), clock))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("00000000000000000000.log")
                .hasMessageContaining("position " + (Files.size(firstLog()) - batch.length));
    }

    /** {@code batch} with its first record's length varint made 5 bytes with the top bit set, CRC fixed. */
    private static byte[] overlongRecordLength(byte[] batch) {
        java.util.Arrays.fill(batch, DefaultRecordBatch.RECORD_BATCH_OVERHEAD,
                DefaultRecordBatch.RECORD_BATCH_OVERHEAD + 5, (byte) 0xff);
        RecordBatchFuzzTest.fixCrc(ByteBuffer.wrap(batch));
        return batch;
    }

    /**
     * A transactional batch at offset 6 holding one record, made a control batch if {@code
     * control}, its compression id overwritten if {@code compressionId} is not -1, CRC fixed.
     */
    private static byte[] damaged(Compression compression, boolean control, int compressionId, byte[] key,
            byte[] value) {
        ByteBuffer b = MemoryRecords.withTransactionalRecords(compression, 7L, (short) 0, 0,
                new SimpleRecord(T0, key, value)).buffer();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        ByteBuffer batch = ByteBuffer.wrap(bytes);
        batch.putLong(0, 6L); // base offset: right after the three good batches
        int attributesAt = 21;
        short attributes = batch.getShort(attributesAt);
        if (control) {
            attributes |= 0x20;
        }
        if (compressionId >= 0) {
            attributes = (short) ((attributes & ~7) | compressionId);
        }
        batch.putShort(attributesAt, attributes);
        RecordBatchFuzzTest.fixCrc(batch);
        return bytes;
    }

    /** {@code batch} moved to {@code baseOffset}: only its first eight bytes change, which its CRC does not cover. */
    private static byte[] withBaseOffset(byte[] batch, long baseOffset) {
        ByteBuffer.wrap(batch).putLong(0, baseOffset);
        return batch;
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
