package io.pier.log;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.internals.BufferSupplier;

/**
 * The records of a compressed v2 batch, read as kafka-clients' skip-key-value iterator reads them
 * (keys, values and headers skipped, nothing of them held), but through a stream that counts what
 * the codec inflates. Two things the iterator cannot do follow from the count:
 * <ul>
 *   <li>the batch is refused once it has inflated past its budget, within the read or skip that
 *       crosses it: one record may claim up to 2 GiB, and the iterator inflates a record to its
 *       end before a caller can weigh it;</li>
 *   <li>each record must take exactly the bytes its length prefix announces. The iterator reads
 *       the fields and never compares; a record that claims more passes, and then every consumer
 *       fails on it, as a consumer reads the record whole by its length.</li>
 * </ul>
 * Not thread-safe; one call of the validator owns it.
 */
final class InflatedRecords implements AutoCloseable {
    /** The largest record the skip-key-value iterator lets through, as kafka-clients' default. */
    private static final int MAX_RECORD_BYTES = Integer.MAX_VALUE - 8;

    private final DefaultRecordBatch batch;
    private final Budget in;
    private final int count;
    private int read;

    /** {@code maxInflatedBytes}: what the records may inflate to in all before the batch is refused. */
    InflatedRecords(DefaultRecordBatch batch, BufferSupplier buffers, long maxInflatedBytes) {
        this.batch = batch;
        this.count = batch.countOrNull();
        this.in = new Budget(batch.recordInputStream(buffers), maxInflatedBytes, batch.sizeInBytes());
    }

    boolean hasNext() {
        return read < count;
    }

    /** The next record, its key and value skipped; Kafka's exception for a malformed one. */
    Record next() {
        long before = in.inflated;
        Record r;
        try {
            r = DefaultRecord.readPartiallyFrom(in, batch.baseOffset(), batch.baseTimestamp(), batch.baseSequence(),
                    null, MAX_RECORD_BYTES);
        } catch (IllegalArgumentException e) { // a varint read past the end of the stream
            throw new InvalidRecordException("Incorrect declared batch size, premature EOF reached");
        } catch (IOException e) {
            throw new CorruptRecordException("unreadable compressed records: " + e.getMessage());
        }
        long taken = in.inflated - before;
        if (taken != r.sizeInBytes()) {
            throw new InvalidRecordException("Invalid record size: expected to read " + r.sizeInBytes()
                    + " bytes in record payload, but instead read " + taken);
        }
        read++;
        if (read == count && readsMore()) {
            throw new InvalidRecordException("Incorrect declared batch size, records still remaining in file");
        }
        return r;
    }

    private boolean readsMore() {
        try {
            return in.read() != -1;
        } catch (IOException e) {
            throw new CorruptRecordException("unreadable compressed records: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            // a decompressor that fails to close has nothing the log needs
        }
    }

    /**
     * Counts the bytes read and skipped, and refuses the batch at the first byte past the
     * budget. Each read and skip asks the codec for at most one byte more than the budget has
     * left, so a skip of a 2 GiB value inflates no further than the budget either.
     */
    private static final class Budget extends FilterInputStream {
        private final long max;
        private final int batchBytes;
        long inflated;

        Budget(InputStream in, long max, int batchBytes) {
            super(in);
            this.max = max;
            this.batchBytes = batchBytes;
        }

        private long allowance(long wanted) {
            return Math.min(wanted, max - inflated + 1);
        }

        private void count(long bytes) {
            if (bytes > 0) {
                inflated += bytes;
                if (inflated > max) {
                    throw new RecordTooLargeException("compressed record batch of " + batchBytes
                            + " bytes inflates to more than " + max + " bytes");
                }
            }
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, (int) allowance(len));
            count(n);
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(allowance(n));
            count(skipped);
            return skipped;
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }
}
