package io.pier.log;

import java.nio.ByteBuffer;
import java.util.Iterator;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * Checks a produced batch before it reaches the log. Each failure is the Kafka exception the
 * server turns into the matching error code. Stateless.
 */
final class BatchValidator {
    private BatchValidator() {}

    /**
     * What a compressed batch may inflate to, as a multiple of max.message.bytes: well above what
     * producers reach (text seldom compresses better than 10:1), far below a decompression bomb
     * (zeros compress 1,000 to 30,000 times over, depending on the codec).
     */
    static final int MAX_INFLATION = 64;

    /**
     * Returns the single batch of {@code records} once it is known to be well formed under
     * {@code config}: within max.message.bytes, every record keyed on a compacted topic, and with
     * CreateTime every record's timestamp within the topic's bounds around {@code nowMs}.
     *
     * @param nowMs the broker's wall clock, which the timestamps are checked against
     * @param buffers decompression buffers, reused by the log's thread from batch to batch
     */
    static MutableRecordBatch validate(MemoryRecords records, LogConfig config, long nowMs, BufferSupplier buffers) {
        int maxMessageBytes = config.maxMessageBytes();
        if (records.sizeInBytes() == 0) {
            throw new InvalidRecordException("produce request holds no record batch");
        }
        Iterator<MutableRecordBatch> it;
        MutableRecordBatch batch;
        try {
            it = records.batches().iterator();
            batch = it.hasNext() ? it.next() : null;
        } catch (CorruptRecordException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new CorruptRecordException("unreadable record batch: " + e.getMessage());
        }
        if (batch == null) {
            throw new CorruptRecordException("record batch is truncated (" + records.sizeInBytes() + " bytes)");
        }
        if (batch.sizeInBytes() != records.sizeInBytes()) {
            if (hasAnotherBatch(it)) {
                throw new InvalidRecordException("a produce request must carry exactly one record batch per partition");
            }
            throw new CorruptRecordException("trailing bytes after the record batch");
        }
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            throw new UnsupportedForMessageFormatException("record batch magic " + batch.magic()
                    + " is not supported; only magic v2 is");
        }
        if (batch.sizeInBytes() > maxMessageBytes) {
            throw new RecordTooLargeException("record batch of " + batch.sizeInBytes()
                    + " bytes exceeds max.message.bytes " + maxMessageBytes);
        }
        batch.ensureValid(); // size and CRC; throws CorruptRecordException
        if (batch.isControlBatch()) {
            throw new InvalidRecordException("control batches cannot be produced");
        }
        if (batch.isTransactional() && !batch.hasProducerId()) {
            throw new InvalidRecordException("transactional batch without a producer id");
        }
        if (batch.hasProducerId() && (batch.producerEpoch() < 0 || batch.baseSequence() < 0)) {
            throw new InvalidRecordException("idempotent batch of producer " + batch.producerId()
                    + " lacks an epoch or sequence");
        }
        CompressionType compression;
        try {
            compression = batch.compressionType();
        } catch (IllegalArgumentException e) { // attribute bits 0-2 hold 5, 6 or 7
            throw new CorruptRecordException("record batch " + e.getMessage());
        }
        if (compression == CompressionType.SNAPPY) {
            ByteBuffer payload = records.buffer().duplicate();
            payload.position(payload.position() + DefaultRecordBatch.RECORD_BATCH_OVERHEAD); // the records follow the 61-byte header
            SnappyFrames.check(payload);
        }
        if (batch.timestampType() == TimestampType.LOG_APPEND_TIME) {
            // As Kafka: the broker stamps LogAppendTime, a producer may not.
            throw new InvalidTimestampException("Invalid timestamp type in the record batch: a producer may not set"
                    + " LogAppendTime");
        }
        checkRecords(batch, config, nowMs, buffers);
        return batch;
    }

    private static boolean hasAnotherBatch(Iterator<MutableRecordBatch> it) {
        try {
            return it.hasNext();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * The header's record count must match its offset span, and the records must be exactly that
     * many, at consecutive offsets. Compressed batches are inflated to look, as Kafka's
     * LogValidator does, but streamed with keys and values skipped ({@link InflatedRecords}), so
     * memory stays bounded by the decompression buffers whatever the payload claims; a batch that
     * inflates to more than {@link #MAX_INFLATION} times max.message.bytes is refused as a
     * decompression bomb as soon as it does, which bounds the time too. On a compacted topic
     * every record needs a key.
     */
    private static void checkRecords(MutableRecordBatch batch, LogConfig config, long nowMs, BufferSupplier buffers) {
        long span = batch.lastOffset() - batch.baseOffset() + 1;
        Integer count = batch.countOrNull();
        if (count == null || count <= 0 || count != span) {
            throw new InvalidRecordException("record count " + count + " does not match last offset delta "
                    + (span - 1));
        }
        RecordChecks checks = new RecordChecks(batch, config, nowMs);
        if (!batch.isCompressed()) {
            // read from the request's own bytes, each record's length checked by kafka-clients
            try (CloseableIterator<Record> records = batch.skipKeyValueIterator(buffers)) {
                while (records.hasNext()) {
                    checks.check(records.next());
                }
            } catch (ApiException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new CorruptRecordException("malformed record in batch: " + e.getMessage());
            }
        } else if (batch instanceof DefaultRecordBatch v2) { // magic 2, as checked before
            long maxInflatedBytes = (long) MAX_INFLATION * Math.max(config.maxMessageBytes(), batch.sizeInBytes());
            try (InflatedRecords records = new InflatedRecords(v2, buffers, maxInflatedBytes)) {
                while (records.hasNext()) {
                    checks.check(records.next());
                }
            } catch (ApiException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new CorruptRecordException("malformed record in batch: " + e.getMessage());
            }
        } else {
            throw new UnsupportedForMessageFormatException("record batch of " + batch.getClass().getSimpleName());
        }
        checks.checkAllRead();
    }

    /** What each record of a batch must be, in order; see {@link #checkRecords}. */
    private static final class RecordChecks {
        private final MutableRecordBatch batch;
        private final boolean keysRequired;
        private final TimestampBounds bounds;
        private long expected;

        RecordChecks(MutableRecordBatch batch, LogConfig config, long nowMs) {
            this.batch = batch;
            this.keysRequired = config.cleanupPolicy().compact();
            this.bounds = config.logAppendTime() ? null : new TimestampBounds(config, nowMs);
            this.expected = batch.baseOffset();
        }

        void check(Record r) {
            if (r.offset() != expected) {
                throw new InvalidRecordException("record offsets in the batch are not consecutive");
            }
            if (keysRequired && !r.hasKey()) {
                throw new InvalidRecordException("Compacted topic cannot accept message without key (offset delta "
                        + (r.offset() - batch.baseOffset()) + ")");
            }
            if (bounds != null) {
                bounds.check(r);
            }
            expected++;
        }

        void checkAllRead() {
            if (expected != batch.lastOffset() + 1) {
                throw new InvalidRecordException("batch holds " + (expected - batch.baseOffset())
                        + " records but its header says " + batch.countOrNull());
            }
        }
    }

    /**
     * message.timestamp.before.max.ms and message.timestamp.after.max.ms around the broker's clock,
     * for a CreateTime topic; Kafka's check and message. A record without a timestamp passes.
     */
    private static final class TimestampBounds {
        /** The oldest and newest timestamps accepted; the limits of a long where there is none. */
        private final long lowest;
        private final long highest;
        private final long nowMs;

        TimestampBounds(LogConfig config, long nowMs) {
            this.nowMs = nowMs;
            lowest = nowMs - config.timestampBeforeMaxMs(); // nowMs >= 0: no overflow
            highest = config.timestampAfterMaxMs() > Long.MAX_VALUE - nowMs ? Long.MAX_VALUE
                    : nowMs + config.timestampAfterMaxMs();
        }

        void check(Record r) {
            long ts = r.timestamp();
            if (ts != RecordBatch.NO_TIMESTAMP && (ts < lowest || ts > highest)) {
                throw new InvalidTimestampException("Timestamp " + ts + " of message with offset " + r.offset()
                        + " is out of range. The timestamp should be within [" + lowest + ", " + highest
                        + "] (the broker's clock: " + nowMs + ")");
            }
        }
    }
}
