package io.pier.log;

import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AppendValidationTest {
    @TempDir
    Path tmp;

    private PartitionLog log;

    @BeforeEach
    void open() throws IOException {
        LogConfig d = config(Durability.NONE);
        LogConfig small = new LogConfig(d.segmentBytes(), d.segmentMs(), d.retentionMs(), d.retentionBytes(), 500,
                d.indexIntervalBytes(), false, Durability.NONE);
        log = PartitionLog.open(tmp.resolve("p"), small, new ManualClock(1000));
    }

    @AfterEach
    void close() {
        log.close();
    }

    private void assertRejected(MemoryRecords records, Class<? extends Throwable> type, Errors error) {
        assertThatThrownBy(() -> log.append(records))
                .isInstanceOf(type)
                .satisfies(e -> assertThat(Errors.forException(e)).isEqualTo(error));
        assertThat(log.logEndOffset()).as("nothing appended").isZero();
    }

    @Test
    void shouldRejectSeveralBatches() {
        MemoryRecords a = values(1, "a");
        MemoryRecords b = values(1, "b");
        ByteBuffer both = ByteBuffer.allocate(a.sizeInBytes() + b.sizeInBytes()).put(a.buffer()).put(b.buffer()).flip();
        assertRejected(MemoryRecords.readableRecords(both), InvalidRecordException.class, Errors.INVALID_RECORD);
    }

    @Test
    void shouldRejectEmptyAndTruncatedInput() {
        assertRejected(MemoryRecords.EMPTY, InvalidRecordException.class, Errors.INVALID_RECORD);
        MemoryRecords a = values(1, "a", "b");
        ByteBuffer cut = a.buffer().duplicate();
        cut.limit(cut.limit() - 4);
        assertRejected(MemoryRecords.readableRecords(cut.slice()), CorruptRecordException.class, Errors.CORRUPT_MESSAGE);
    }

    @Test
    void shouldRejectOldMagic() {
        MemoryRecords v1 = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, Compression.NONE,
                new SimpleRecord(1L, null, "a".getBytes()));
        assertRejected(v1, UnsupportedForMessageFormatException.class, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT);
    }

    @Test
    void shouldRejectBadChecksum() {
        MemoryRecords recs = values(1, "hello");
        ByteBuffer buf = recs.buffer();
        int last = buf.limit() - 1;
        buf.put(last, (byte) (buf.get(last) ^ 1));
        assertRejected(recs, CorruptRecordException.class, Errors.CORRUPT_MESSAGE);
    }

    @Test
    void shouldRejectOversizedBatch() {
        assertRejected(TestBatches.sized(1, 600), RecordTooLargeException.class, Errors.MESSAGE_TOO_LARGE);
    }

    @Test
    void shouldAcceptTransactionalBatchAndHoldTheLastStableOffsetAtIt() throws IOException {
        MemoryRecords txn = MemoryRecords.withTransactionalRecords(Compression.NONE, 7L, (short) 0, 0,
                new SimpleRecord(1L, null, "a".getBytes()));
        assertThat(log.append(txn).baseOffset()).isZero();
        assertThat(log.lastStableOffset()).isZero();
    }

    @Test
    void shouldRejectControlBatch() {
        MemoryRecords marker = MemoryRecords.withEndTransactionMarker(7L, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        assertRejected(marker, InvalidRecordException.class, Errors.INVALID_RECORD);
    }

    @Test
    void shouldRejectRecordCountThatDisagreesWithOffsets() {
        MemoryRecords recs = values(1, "a", "b");
        ByteBuffer buf = recs.buffer();
        buf.putInt(DefaultRecordBatch.RECORDS_COUNT_OFFSET, 3);
        // Re-stamp so the CRC matches the altered header and only the count check can object.
        MutableRecordBatch batch = recs.batches().iterator().next();
        batch.setMaxTimestamp(TimestampType.CREATE_TIME, 2);
        assertThat(batch.isValid()).isTrue();
        assertRejected(recs, InvalidRecordException.class, Errors.INVALID_RECORD);
    }

    @Test
    void shouldRejectCompressedBatchWhoseHeaderAnnouncesMoreRecordsThanItHolds() {
        // Given a gzip batch of two records whose header claims Integer.MAX_VALUE, CRC re-stamped
        MemoryRecords recs = TestBatches.withTimestamps(TestBatches.GZIP, 1, 2);
        ByteBuffer buf = recs.buffer();
        buf.putInt(DefaultRecordBatch.RECORDS_COUNT_OFFSET, Integer.MAX_VALUE);
        buf.putInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET, Integer.MAX_VALUE - 1);
        MutableRecordBatch batch = recs.batches().iterator().next();
        batch.setMaxTimestamp(TimestampType.CREATE_TIME, 3);
        assertThat(batch.isValid()).isTrue();

        // Then it is refused rather than taking 2^31 offsets
        assertRejected(recs, InvalidRecordException.class, Errors.INVALID_RECORD);
    }

    @Test
    void shouldAcceptGzipBatch() throws IOException {
        AppendResult r = log.append(TestBatches.withTimestamps(TestBatches.GZIP, 1, 2, 3));
        assertThat(r.lastOffset()).isEqualTo(2);
    }
}
