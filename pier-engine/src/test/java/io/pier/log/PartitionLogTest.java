package io.pier.log;

import static io.pier.log.TestBatches.GZIP;
import static io.pier.log.TestBatches.batchBaseOffsets;
import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.offsetsOf;
import static io.pier.log.TestBatches.sized;
import static io.pier.log.TestBatches.values;
import static io.pier.log.TestBatches.valuesOf;
import static io.pier.log.TestBatches.withTimestamps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionLogTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog open(LogConfig config) throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("topic-0"), config, clock);
        opened.add(log);
        return log;
    }

    private static LogConfig cfg(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes,
            int indexInterval, boolean logAppendTime, Durability durability) {
        return new LogConfig(segmentBytes, segmentMs, retentionMs, retentionBytes, 1048588, indexInterval,
                logAppendTime, durability);
    }

    private long[] segmentBases() throws IOException {
        try (Stream<Path> s = Files.list(tmp.resolve("topic-0"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log"))
                    .mapToLong(n -> Long.parseLong(n.substring(0, 20))).sorted().toArray();
        }
    }

    @Test
    void shouldAssignOffsetsAndReadBackBatches() throws IOException {
        PartitionLog log = open(config(Durability.NONE));

        AppendResult a = log.append(values(T0, "a", "b"));
        AppendResult b = log.append(TestBatches.withTimestamps(GZIP, T0, T0 + 1, T0 + 2));
        AppendResult c = log.append(values(T0, "f"));

        assertThat(a).isEqualTo(new AppendResult(0, 1, -1, 0, false));
        assertThat(b).isEqualTo(new AppendResult(2, 4, -1, 0, false));
        assertThat(c).isEqualTo(new AppendResult(5, 5, -1, 0, false));
        assertThat(log.logEndOffset()).isEqualTo(6);

        LogReadResult<MemoryRecords> all = log.read(0, Integer.MAX_VALUE, false);
        assertThat(batchBaseOffsets(all.records())).containsExactly(0L, 2L, 5L);
        assertThat(offsetsOf(all.records())).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(valuesOf(all.records())).containsExactly("a", "b", "v" + T0, "v" + (T0 + 1), "v" + (T0 + 2), "f");
        assertThat(all.highWatermark()).isEqualTo(6);
        assertThat(all.logEndOffset()).isEqualTo(6);
        for (RecordBatch batch : all.records().batches()) {
            batch.ensureValid();
            assertThat(batch.partitionLeaderEpoch()).isZero();
        }

        // A fetch in the middle of a batch returns that whole batch.
        assertThat(batchBaseOffsets(log.read(3, Integer.MAX_VALUE, false).records())).containsExactly(2L, 5L);
        assertThat(log.read(6, 1000, false).records().sizeInBytes()).isZero();
    }

    @Test
    void shouldRejectFetchOutsideTheLog() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.append(values(T0, "a", "b"));

        assertThatThrownBy(() -> log.read(3, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThatThrownBy(() -> log.read(-1, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);
    }

    @Test
    void shouldStopAtMaxBytesUnlessMinOneBatch() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        for (int i = 0; i < 3; i++) {
            log.append(sized(T0, 100));
        }
        int batchSize = log.read(0, Integer.MAX_VALUE, false).records().firstBatchSize();

        assertThat(batchBaseOffsets(log.read(0, batchSize * 2 + 1, false).records())).containsExactly(0L, 1L);
        assertThat(batchBaseOffsets(log.read(0, batchSize * 2, true).records())).containsExactly(0L, 1L);
        assertThat(log.read(0, batchSize - 1, false).records()).isEqualTo(MemoryRecords.EMPTY);
        assertThat(batchBaseOffsets(log.read(1, 10, true).records())).containsExactly(1L);
    }

    @Test
    void shouldRollBySizeAndReadAcrossSegments() throws IOException {
        PartitionLog log = open(cfg(300, Long.MAX_VALUE, -1, -1, 4096, false, Durability.NONE));
        for (int i = 0; i < 10; i++) {
            log.append(sized(T0, 100)); // about 170 bytes each: one per segment
        }
        log.append(sized(T0, 1000)); // bigger than a segment: goes in alone

        assertThat(segmentBases()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        assertThat(log.segmentCount()).isEqualTo(11);
        assertThat(offsetsOf(log.read(0, Integer.MAX_VALUE, false).records()))
                .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(batchBaseOffsets(log.read(7, Integer.MAX_VALUE, false).records()))
                .containsExactly(7L, 8L, 9L, 10L);
    }

    @Test
    void shouldPackBatchesUntilSegmentIsFull() throws IOException {
        PartitionLog log = open(cfg(1000, Long.MAX_VALUE, -1, -1, 4096, false, Durability.NONE));
        for (int i = 0; i < 10; i++) {
            log.append(sized(T0, 100));
        }
        assertThat(log.segmentCount()).isBetween(2, 3);
        long[] bases = segmentBases();
        assertThat(bases[0]).isZero();
        assertThat(bases[1]).isGreaterThan(1);
    }

    @Test
    void shouldRollByAge() throws IOException {
        PartitionLog log = open(cfg(1 << 20, 1000, -1, -1, 4096, false, Durability.NONE));
        log.append(values(T0, "a"));
        clock.advance(999);
        log.append(values(T0, "b"));
        assertThat(log.segmentCount()).isEqualTo(1);

        clock.advance(1);
        log.append(values(T0, "c"));
        assertThat(segmentBases()).containsExactly(0, 2);

        // enforceRetention rolls an old active segment even without appends
        clock.advance(1000);
        log.enforceRetention();
        assertThat(segmentBases()).containsExactly(0, 2, 3);
        // ...but never rolls an empty one
        clock.advance(5000);
        log.enforceRetention();
        assertThat(log.segmentCount()).isEqualTo(3);
    }

    @Test
    void shouldFindEveryOffsetThroughTheSparseIndex() throws IOException {
        PartitionLog log = open(cfg(20_000, Long.MAX_VALUE, -1, -1, 200, false, Durability.NONE));
        int n = 0;
        for (int i = 0; i < 400; i++) {
            int count = 1 + i % 3;
            String[] vs = new String[count];
            for (int j = 0; j < count; j++) {
                vs[j] = "m" + (n++);
            }
            log.append(values(T0 + i, vs));
        }
        assertThat(log.segmentCount()).isGreaterThan(1);
        Path index = tmp.resolve("topic-0").resolve("00000000000000000000.index");
        assertThat(Files.size(index)).isGreaterThan(8 * 10);

        for (long offset = 0; offset < n; offset += 7) {
            MemoryRecords recs = log.read(offset, 1, true).records();
            RecordBatch first = recs.batches().iterator().next();
            assertThat(first.baseOffset()).isLessThanOrEqualTo(offset);
            assertThat(first.lastOffset()).isGreaterThanOrEqualTo(offset);
            assertThat(valuesOf(recs)).contains("m" + offset);
        }
    }

    @Test
    void shouldFindOffsetForTimestampAndMaxTimestamp() throws IOException {
        PartitionLog log = open(cfg(400, Long.MAX_VALUE, -1, -1, 50, false, Durability.NONE));
        log.append(withTimestamps(Compression.NONE, 100, 300, 200)); // 0..2
        log.append(withTimestamps(GZIP, 150, 500, 500));               // 3..5
        log.append(withTimestamps(Compression.NONE, 400));             // 6
        for (int i = 0; i < 20; i++) {
            log.append(withTimestamps(Compression.NONE, 600 + i));     // 7..26, several segments
        }
        assertThat(log.segmentCount()).isGreaterThan(2);

        assertThat(log.offsetForTimestamp(0)).isEqualTo(new OffsetAndTimestamp(0, 100));
        assertThat(log.offsetForTimestamp(101)).isEqualTo(new OffsetAndTimestamp(1, 300));
        assertThat(log.offsetForTimestamp(301)).isEqualTo(new OffsetAndTimestamp(4, 500));
        assertThat(log.offsetForTimestamp(501)).isEqualTo(new OffsetAndTimestamp(7, 600));
        assertThat(log.offsetForTimestamp(615)).isEqualTo(new OffsetAndTimestamp(22, 615));
        assertThat(log.offsetForTimestamp(620)).isNull();

        log.append(withTimestamps(Compression.NONE, 10_000, 10_000)); // 27, 28
        log.append(withTimestamps(Compression.NONE, 10_000));         // 29
        assertThat(log.maxTimestamp()).isEqualTo(new OffsetAndTimestamp(27, 10_000));
    }

    @Test
    void shouldAnswerTimestampQueriesFromTheLogStartOffset() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.append(withTimestamps(Compression.NONE, 900, 100, 200)); // 0..2
        log.deleteRecordsBefore(1);

        assertThat(log.maxTimestamp()).isEqualTo(new OffsetAndTimestamp(2, 200));
        assertThat(log.offsetForTimestamp(0)).isEqualTo(new OffsetAndTimestamp(1, 100));
    }

    @Test
    void shouldAnswerNoTimestampForEmptyLog() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE));
        assertThat(log.maxTimestamp()).isNull();
        assertThat(log.offsetForTimestamp(0)).isNull();
        log.append(withTimestamps(Compression.NONE, 5));
        assertThat(log.maxTimestamp()).as("not yet below the high watermark").isNull();
        log.flush();
        assertThat(log.maxTimestamp()).isEqualTo(new OffsetAndTimestamp(0, 5));
    }

    @Test
    void shouldStampLogAppendTime() throws IOException {
        PartitionLog log = open(cfg(1 << 20, Long.MAX_VALUE, -1, -1, 4096, true, Durability.NONE));
        AppendResult r = log.append(withTimestamps(GZIP, 1, 2, 3));

        assertThat(r.logAppendTimeMs()).isEqualTo(T0);
        RecordBatch batch = log.read(0, 1 << 20, true).records().batches().iterator().next();
        assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(batch.maxTimestamp()).isEqualTo(T0);
        batch.ensureValid();
        for (Record rec : batch) {
            assertThat(rec.timestamp()).isEqualTo(T0);
        }
        assertThat(log.offsetForTimestamp(T0)).isEqualTo(new OffsetAndTimestamp(0, T0));
    }

    @Test
    void shouldDeleteSegmentsPastRetentionTime() throws IOException {
        PartitionLog log = open(cfg(200, Long.MAX_VALUE, 10_000, -1, 4096, false, Durability.NONE));
        log.append(sized(T0 - 20_000, 100));
        log.append(sized(T0 - 15_000, 100));
        log.append(sized(T0 - 5_000, 100));
        log.append(sized(T0 - 30_000, 100)); // active: never deleted
        assertThat(log.segmentCount()).isEqualTo(4);

        assertThat(log.enforceRetention()).isTrue();
        assertThat(segmentBases()).containsExactly(2, 3);
        assertThat(log.logStartOffset()).isEqualTo(2);
        assertThatThrownBy(() -> log.read(1, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);

        assertThat(log.enforceRetention()).isFalse();
        clock.advance(6_000);
        assertThat(log.enforceRetention()).isTrue();
        assertThat(segmentBases()).containsExactly(3);
        assertThat(offsetsOf(log.read(3, 1000, true).records())).containsExactly(3L);
    }

    @Test
    void shouldDeleteOldestSegmentsPastRetentionBytes() throws IOException {
        PartitionLog log = open(cfg(200, Long.MAX_VALUE, -1, 400, 4096, false, Durability.NONE));
        for (int i = 0; i < 5; i++) {
            log.append(sized(T0, 100));
        }
        long segment = log.sizeInBytes() / 5;
        assertThat(log.enforceRetention()).isTrue();
        // Like Kafka: delete oldest segments only while what remains stays at least retention.bytes.
        assertThat(log.sizeInBytes()).isGreaterThanOrEqualTo(400).isLessThan(400 + segment);
        assertThat(segmentBases()).containsExactly(2, 3, 4);
        assertThat(log.logStartOffset()).isEqualTo(2);
        assertThat(log.enforceRetention()).isFalse();
    }

    @Test
    void shouldNotDeleteUnflushedSegmentsUnderDurable() throws IOException {
        PartitionLog log = open(cfg(200, Long.MAX_VALUE, -1, 0, 4096, false, Durability.DURABLE));
        log.append(sized(T0, 100));
        log.append(sized(T0, 100));
        log.append(sized(T0, 100));
        assertThat(log.enforceRetention()).as("nothing is below the high watermark yet").isFalse();
        log.flush();
        assertThat(log.enforceRetention()).isTrue();
        assertThat(segmentBases()).containsExactly(2);
    }

    @Test
    void shouldKeepDeleteRecordsOffsetAcrossReopen() throws IOException {
        LogConfig config = cfg(200, Long.MAX_VALUE, -1, -1, 4096, false, Durability.NONE);
        PartitionLog log = open(config);
        for (int i = 0; i < 4; i++) {
            log.append(values(T0, "x" + (2 * i), "x" + (2 * i + 1))); // two batches fit a segment
        }
        assertThat(segmentBases()).containsExactly(0, 4);
        assertThat(log.deleteRecordsBefore(5)).isEqualTo(5);
        assertThat(segmentBases()).containsExactly(4);
        assertThat(log.deleteRecordsBefore(3)).as("never moves back").isEqualTo(5);
        assertThatThrownBy(() -> log.deleteRecordsBefore(9)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThatThrownBy(() -> log.read(4, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);
        log.close();

        PartitionLog reopened = open(config);
        assertThat(reopened.logStartOffset()).isEqualTo(5);
        assertThat(reopened.logEndOffset()).isEqualTo(8);
        assertThatThrownBy(() -> reopened.read(4, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(valuesOf(reopened.read(5, 1000, false).records())).containsExactly("x4", "x5", "x6", "x7");

        assertThat(reopened.deleteRecordsBefore(8)).isEqualTo(8);
        assertThat(reopened.read(8, 100, true).records().sizeInBytes()).isZero();
        assertThat(reopened.append(values(T0, "y")).baseOffset()).isEqualTo(8);
    }

    @Test
    void shouldMoveHighWatermarkOnlyOnFlushWhenDurable() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE));
        assertThat(log.hasUnflushedData()).isFalse();
        log.append(values(T0, "a", "b"));

        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(log.highWatermark()).isZero();
        assertThat(log.hasUnflushedData()).isTrue();
        assertThat(log.read(0, 1000, true).records().sizeInBytes()).isZero();
        assertThatThrownBy(() -> log.read(1, 1000, true)).isInstanceOf(OffsetOutOfRangeException.class);

        log.flush();
        assertThat(log.highWatermark()).isEqualTo(2);
        assertThat(log.hasUnflushedData()).isFalse();
        log.append(values(T0, "c"));
        assertThat(valuesOf(log.read(0, 1000, false).records())).containsExactly("a", "b");
        log.flush();
        assertThat(valuesOf(log.read(0, 1000, false).records())).containsExactly("a", "b", "c");
    }

    @Test
    void shouldExposeLogEndAsHighWatermarkWithoutDurability() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.append(values(T0, "a", "b"));
        assertThat(log.highWatermark()).isEqualTo(2);
        assertThat(log.hasUnflushedData()).isFalse();
        assertThat(valuesOf(log.read(0, 1000, false).records())).containsExactly("a", "b");
    }

    @Test
    void shouldKeepHighWatermarkWhenSwitchingToDurable() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.append(values(T0, "a"));
        log.updateConfig(config(Durability.DURABLE));
        assertThat(log.highWatermark()).isEqualTo(1);
        log.append(values(T0, "b"));
        assertThat(log.highWatermark()).isEqualTo(1);
        log.flush();
        assertThat(log.highWatermark()).isEqualTo(2);
    }

    @Test
    void shouldKeepDataAndOffsetsAcrossReopen() throws IOException {
        LogConfig config = cfg(300, Long.MAX_VALUE, -1, -1, 100, false, Durability.DURABLE);
        PartitionLog log = open(config);
        for (int i = 0; i < 6; i++) {
            log.append(values(T0 + i, "r" + (2 * i), "r" + (2 * i + 1)));
        }
        log.close();

        PartitionLog reopened = open(config);
        assertThat(reopened.logEndOffset()).isEqualTo(12);
        assertThat(reopened.highWatermark()).isEqualTo(12);
        assertThat(offsetsOf(reopened.read(0, 1 << 20, false).records())).hasSize(12);
        assertThat(reopened.append(values(T0, "next")).baseOffset()).isEqualTo(12);
        reopened.flush();
        assertThat(valuesOf(reopened.read(11, 1 << 20, false).records())).containsExactly("r10", "r11", "next");
        assertThat(reopened.offsetForTimestamp(T0 + 3)).isEqualTo(new OffsetAndTimestamp(6, T0 + 3));
    }

    @Test
    void shouldRemoveDirectoryOnDeleteFiles() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE));
        log.append(values(T0, "a"));
        log.deleteFiles();
        assertThat(tmp.resolve("topic-0")).doesNotExist();
    }
}
