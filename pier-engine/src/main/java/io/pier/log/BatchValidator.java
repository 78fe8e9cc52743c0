package io.pier.log;

import java.util.Iterator;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Checks a produced batch before it reaches the log. Each failure is the Kafka exception the
 * server turns into the matching error code. Stateless.
 */
final class BatchValidator {
    private BatchValidator() {}

    /** Returns the single batch of {@code records} once it is known to be well formed. */
    static MutableRecordBatch validate(MemoryRecords records, int maxMessageBytes) {
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
        checkCount(batch);
        return batch;
    }

    /**
     * A compacted topic keeps the latest record per key, so, as in Kafka, every record produced
     * to one must have a key. Compressed batches are decompressed to look.
     */
    static void requireKeys(MutableRecordBatch batch) {
        try {
            for (Record r : batch) {
                if (!r.hasKey()) {
                    throw new InvalidRecordException("Compacted topic cannot accept message without key (offset delta "
                            + (r.offset() - batch.baseOffset()) + ")");
                }
            }
        } catch (InvalidRecordException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new CorruptRecordException("malformed record in batch: " + e.getMessage());
        }
    }

    private static boolean hasAnotherBatch(Iterator<MutableRecordBatch> it) {
        try {
            return it.hasNext();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * The header's record count must match its offset span. Uncompressed records are also walked
     * (no decompression needed) so their offset deltas are checked; compressed payloads are
     * covered by the CRC and left alone.
     */
    private static void checkCount(MutableRecordBatch batch) {
        long span = batch.lastOffset() - batch.baseOffset() + 1;
        Integer count = batch.countOrNull();
        if (count == null || count <= 0 || count != span) {
            throw new InvalidRecordException("record count " + count + " does not match last offset delta "
                    + (span - 1));
        }
        if (batch.compressionType() == CompressionType.NONE) {
            long expected = batch.baseOffset();
            try {
                for (Record r : batch) {
                    if (r.offset() != expected) {
                        throw new InvalidRecordException("record offsets in the batch are not consecutive");
                    }
                    expected++;
                }
            } catch (InvalidRecordException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new CorruptRecordException("malformed record in batch: " + e.getMessage());
            }
            if (expected != batch.lastOffset() + 1) {
                throw new InvalidRecordException("batch holds " + (expected - batch.baseOffset())
                        + " records but its header says " + count);
            }
        }
    }
}
