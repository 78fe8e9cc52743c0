package io.pier.log;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

/** Builds produce-style batches for tests and reads values back. */
final class TestBatches {
    static final Compression GZIP = Compression.gzip().build();

    private TestBatches() {}

    /** One batch with one record per timestamp; values are "v<timestamp>". */
    static MemoryRecords withTimestamps(Compression compression, long... timestamps) {
        SimpleRecord[] rs = new SimpleRecord[timestamps.length];
        for (int i = 0; i < timestamps.length; i++) {
            rs[i] = new SimpleRecord(timestamps[i], null, ("v" + timestamps[i]).getBytes(UTF_8));
        }
        return MemoryRecords.withRecords(compression, rs);
    }

    /** One uncompressed batch of {@code count} records with the given values. */
    static MemoryRecords values(long timestamp, String... values) {
        SimpleRecord[] rs = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            rs[i] = new SimpleRecord(timestamp, null, values[i].getBytes(UTF_8));
        }
        return MemoryRecords.withRecords(Compression.NONE, rs);
    }

    /** One uncompressed batch holding a single record with a value of {@code size} bytes. */
    static MemoryRecords sized(long timestamp, int size) {
        return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(timestamp, null, new byte[size]));
    }

    static MemoryRecords idempotent(long producerId, short epoch, int firstSeq, int count) {
        SimpleRecord[] rs = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            rs[i] = new SimpleRecord(1000L, null, ("s" + (firstSeq + i)).getBytes(UTF_8));
        }
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, firstSeq, rs);
    }

    /** Every record's value, in order. */
    static List<String> valuesOf(MemoryRecords records) {
        List<String> out = new ArrayList<>();
        for (Record r : records.records()) {
            ByteBuffer v = r.value();
            byte[] b = new byte[v.remaining()];
            v.get(b);
            out.add(new String(b, UTF_8));
        }
        return out;
    }

    /** Every record's offset, in order. */
    static List<Long> offsetsOf(MemoryRecords records) {
        List<Long> out = new ArrayList<>();
        for (Record r : records.records()) {
            out.add(r.offset());
        }
        return out;
    }

    static List<Long> batchBaseOffsets(MemoryRecords records) {
        List<Long> out = new ArrayList<>();
        for (RecordBatch b : records.batches()) {
            out.add(b.baseOffset());
        }
        return out;
    }

    static LogConfig config(Durability durability) {
        LogConfig d = LogConfig.defaults();
        return new LogConfig(d.segmentBytes(), d.segmentMs(), d.retentionMs(), d.retentionBytes(),
                d.maxMessageBytes(), d.indexIntervalBytes(), false, durability);
    }

    static LogConfig withSegmentBytes(LogConfig c, long segmentBytes) {
        return new LogConfig(segmentBytes, c.segmentMs(), c.retentionMs(), c.retentionBytes(), c.maxMessageBytes(),
                c.indexIntervalBytes(), c.logAppendTime(), c.durability());
    }
}
