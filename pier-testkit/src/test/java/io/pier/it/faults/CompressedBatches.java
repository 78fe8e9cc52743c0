package io.pier.it.faults;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.apache.kafka.common.utils.internals.ByteUtils;

/**
 * Compressed v2 batches for {@link DecompressionBombIT}: well-formed ones from kafka-clients'
 * builder, and bombs and liars whose records are written into the codec's stream one by one, so a
 * batch that inflates to gigabytes never exists uncompressed in the test's memory. Records are
 * written with kafka-clients' {@link DefaultRecord#writeTo}, and compressed by the codecs'
 * kafka-clients streams (gzip: the JDK's, as concatenated members, see {@link GzipMembers}). The
 * bytes written by hand are the deliberate lies, the prefix of a record of zeros (so its value
 * can be streamed, not held) and the snappy framing of a lying block; each says so.
 */
final class CompressedBatches {
    static final int MIB = 1 << 20;
    /** Zeros written to the codec per call: small enough for the stack of buffers to stay small. */
    private static final byte[] ZEROS = new byte[MIB];

    private CompressedBatches() {}

    /** What writes a batch's records, uncompressed, into the codec's stream. */
    @FunctionalInterface
    interface RecordsWriter {
        void write(Sink sink) throws IOException;
    }

    /** The codec's stream, and a fast way to write many zeros into it. */
    static final class Sink {
        final DataOutputStream out;
        private final GzipMembers gzip;

        Sink(DataOutputStream out, GzipMembers gzip) {
            this.out = out;
            this.gzip = gzip;
        }

        void zeros(long bytes) throws IOException {
            if (gzip != null) {
                out.flush();
                gzip.zeros(bytes);
                return;
            }
            for (long left = bytes; left > 0; left -= ZEROS.length) {
                out.write(ZEROS, 0, (int) Math.min(left, ZEROS.length));
            }
        }
    }

    /**
     * Each codec at its fastest level that still packs zeros tightly: the test's own compression
     * time is most of what a bomb costs it. gzip keeps its default level, as at level 1 it packs
     * zeros about 230 to 1 against about 1,000 to 1.
     */
    static Compression fastest(CompressionType type) {
        return switch (type) {
            case GZIP -> Compression.gzip().build();
            case LZ4 -> Compression.lz4().level(1).build();
            case ZSTD -> Compression.zstd().level(1).build();
            default -> Compression.of(type).build();
        };
    }

    /**
     * {@code count} records, each of {@code valueBytes} bytes that are all {@code (byte) i} except
     * for the record's index in the first four, via kafka-clients' builder: a legitimate batch.
     */
    static MemoryRecords patterned(CompressionType type, int count, int valueBytes) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(MIB), fastest(type),
                TimestampType.CREATE_TIME, 0L);
        long now = System.currentTimeMillis();
        for (int i = 0; i < count; i++) {
            builder.append(now, null, patternedValue(i, valueBytes));
        }
        return builder.build();
    }

    /** The value {@link #patterned} gives record {@code index}. */
    static byte[] patternedValue(int index, int valueBytes) {
        byte[] value = new byte[valueBytes];
        java.util.Arrays.fill(value, (byte) index);
        ByteBuffer.wrap(value).putInt(0, index);
        return value;
    }

    /** A bomb of many records: {@code count} records of {@code valueBytes} zeros each. */
    static MemoryRecords zeroRecords(CompressionType type, int count, int valueBytes) throws IOException {
        return craft(type, count, sink -> {
            for (int i = 0; i < count; i++) {
                writeZeroRecord(sink, i, valueBytes, valueBytes);
            }
        });
    }

    /**
     * One record whose value claims {@code valueBytes} zeros, more than a byte array holds
     * comfortably, of which {@code writtenBytes} follow: a bomb when they are all there, a liar
     * when the stream ends early (then nothing follows them).
     */
    static MemoryRecords oneZeroRecord(CompressionType type, int valueBytes, int writtenBytes) throws IOException {
        return craft(type, 1, sink -> writeZeroRecord(sink, 0, valueBytes, writtenBytes));
    }

    /**
     * A record of zeros at {@code offsetDelta}. Its prefix is written by hand, field for field as
     * DefaultRecord lays it out (its sizes from {@link DefaultRecord#sizeOfBodyInBytes}), so the
     * value can be streamed instead of held.
     */
    private static void writeZeroRecord(Sink sink, int offsetDelta, int valueBytes, int writtenBytes)
            throws IOException {
        var noHeaders = new org.apache.kafka.common.header.Header[0];
        DataOutputStream out = sink.out;
        ByteUtils.writeVarint(DefaultRecord.sizeOfBodyInBytes(offsetDelta, 0L, -1, valueBytes, noHeaders), out);
        out.write(0); // attributes
        ByteUtils.writeVarlong(0L, out); // timestamp delta
        ByteUtils.writeVarint(offsetDelta, out);
        ByteUtils.writeVarint(-1, out); // null key
        ByteUtils.writeVarint(valueBytes, out);
        sink.zeros(writtenBytes);
        if (writtenBytes == valueBytes) {
            ByteUtils.writeVarint(0, out); // no headers
        }
    }

    /**
     * A batch at offset 0 with {@code count} in its header (and a last offset delta to match),
     * whatever records {@code writer} puts into the codec's stream; the CRC is right.
     */
    static MemoryRecords craft(CompressionType type, int count, RecordsWriter writer) throws IOException {
        ByteBufferOutputStream bytes = new ByteBufferOutputStream(64 * 1024);
        bytes.position(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        GzipMembers gzip = type == CompressionType.GZIP ? new GzipMembers(bytes) : null;
        OutputStream codec = gzip != null ? gzip : fastest(type).wrapForOutput(bytes, RecordBatch.MAGIC_VALUE_V2);
        try (DataOutputStream out = new DataOutputStream(codec)) {
            writer.write(new Sink(out, gzip));
        }
        ByteBuffer buffer = bytes.buffer();
        int size = bytes.position();
        buffer.position(0);
        long now = System.currentTimeMillis();
        DefaultRecordBatch.writeHeader(buffer, 0L, count - 1, size, RecordBatch.MAGIC_VALUE_V2, type,
                TimestampType.CREATE_TIME, now, now, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE, false, false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, count);
        buffer.position(0).limit(size);
        return MemoryRecords.readableRecords(buffer.slice());
    }

    /**
     * A snappy batch (xerial framing, as Kafka's producer writes it) whose one block claims to
     * inflate to {@code claimedBytes} from a few bytes. Written by hand: snappy-java writes only
     * true lengths. The block is a varint length and one 4-byte literal.
     */
    static MemoryRecords lyingSnappyBlock(int claimedBytes) {
        ByteBuffer block = ByteBuffer.allocate(16);
        ByteUtils.writeUnsignedVarint(claimedBytes, block);
        block.put((byte) (3 << 2)).put(new byte[4]); // a literal of 4 bytes (tag: length - 1 in the top six bits)
        block.flip();
        ByteBuffer payload = ByteBuffer.allocate(16 + 4 + block.remaining());
        payload.put(new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}).putInt(1).putInt(1);
        payload.putInt(block.remaining()).put(block);
        int size = DefaultRecordBatch.RECORD_BATCH_OVERHEAD + payload.capacity();
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.position(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        buffer.put(payload.flip());
        buffer.position(0);
        long now = System.currentTimeMillis();
        DefaultRecordBatch.writeHeader(buffer, 0L, 0, size, RecordBatch.MAGIC_VALUE_V2, CompressionType.SNAPPY,
                TimestampType.CREATE_TIME, now, now, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE, false, false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH, 1);
        return MemoryRecords.readableRecords(buffer.position(0));
    }

    /**
     * A gzip stream of concatenated members (RFC 1952 allows any number; the JDK's GZIPInputStream,
     * which Kafka's gzip codec reads with, reads them all as one stream). Zeros go in as copies of
     * one member holding 1 MiB of them, compressed once: deflating hundreds of MiB of zeros for
     * each gzip bomb cost the test about a second per 200 MiB. Other bytes go in as members of
     * their own, each flush ending one.
     */
    static final class GzipMembers extends OutputStream {
        private static final byte[] ZERO_MEBIBYTE = gzip(ZEROS, ZEROS.length);
        private final OutputStream target;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        GzipMembers(OutputStream target) {
            this.target = target;
        }

        @Override
        public void write(int b) {
            pending.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            pending.write(b, off, len);
        }

        /** Ends the member being written, if any bytes wait for it. */
        @Override
        public void flush() throws IOException {
            if (pending.size() > 0) {
                target.write(gzip(pending.toByteArray(), pending.size()));
                pending.reset();
            }
        }

        void zeros(long bytes) throws IOException {
            flush();
            long whole = bytes / ZEROS.length;
            for (long i = 0; i < whole; i++) {
                target.write(ZERO_MEBIBYTE);
            }
            int rest = (int) (bytes % ZEROS.length);
            if (rest > 0) {
                target.write(gzip(ZEROS, rest));
            }
        }

        @Override
        public void close() throws IOException {
            flush();
        }

        private static byte[] gzip(byte[] bytes, int length) {
            ByteArrayOutputStream member = new ByteArrayOutputStream();
            try (GZIPOutputStream out = new GZIPOutputStream(member)) {
                out.write(bytes, 0, length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return member.toByteArray();
        }
    }
}
