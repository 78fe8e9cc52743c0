package io.pier.log;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteUtils;
import org.apache.kafka.common.utils.internals.CloseableIterator;
import org.apache.kafka.common.utils.internals.Crc32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The produce path of a partition log ({@link BatchValidator}, then the producer-state checks and
 * the append) fed random and mutated v2 record batches in every codec.
 *
 * <p>Input: one flag byte, then the batch. Flag bit 0 sends it to a compacted log (whose records
 * are decompressed to check their keys); unless bit 1 is set the batch's CRC is recomputed first,
 * as any client can, so mutations get past the checksum into the header and the payload.
 *
 * <p>Kept inputs: {@code RecordBatchFuzzTestInputs/produceBatch/}, among them a valid batch per
 * codec and a decompression bomb per codec (a few KB claiming hundreds of MB of records).
 */
class RecordBatchFuzzTest {
    /** An input may make the log allocate this much plus {@link #BYTES_PER_INPUT_BYTE} per byte of it. */
    private static final long BASE_ALLOCATION = 32L << 20;
    private static final long BYTES_PER_INPUT_BYTE = 64;
    private static final int MAX_MESSAGE_BYTES = 1 << 20;
    /** Logs are replaced after this many appends, so a long campaign does not fill the disk. */
    private static final int APPENDS_PER_LOG = 2_000;

    private static final ManualClock CLOCK = new ManualClock(1_700_000_000_000L);
    private static Path root;
    private static PartitionLog plain;
    private static PartitionLog compacted;
    private static int appends;
    private static int generation;

    @BeforeAll
    static void openLogs() throws IOException {
        root = TestFiles.scratchDirectory("pier-batch-fuzz");
        reopen();
    }

    @AfterAll
    static void closeLogs() throws IOException {
        plain.close();
        compacted.close();
        TestFiles.deleteTree(root);
    }

    /**
     * Invariant: the append succeeds, or fails with a Kafka error the client understands (never
     * UNKNOWN_SERVER_ERROR, an IOException, an OutOfMemoryError or a hang); it allocates at most
     * a small multiple of the batch's size; and a batch accepted holds exactly the records its
     * header announces, at consecutive offsets, each with a key on a compacted log.
     */
    @FuzzTest(maxDuration = "60s")
    void produceBatch(byte[] input) throws IOException {
        if (input.length < 1) {
            return;
        }
        boolean toCompacted = (input[0] & 1) != 0;
        byte[] pristine = java.util.Arrays.copyOfRange(input, 1, input.length);
        if ((input[0] & 2) == 0) {
            fixCrc(ByteBuffer.wrap(pristine));
        }
        PartitionLog log = toCompacted ? compacted : plain;
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(pristine.clone()));
        AllocationMeter.Reading reading = AllocationMeter.start();
        boolean accepted = append(log, records);
        if (reading.classesLoaded()) {
            // the first input down a new path: measure it again, now that its classes are loaded
            records = MemoryRecords.readableRecords(ByteBuffer.wrap(pristine.clone()));
            reading = AllocationMeter.start();
            accepted = append(log, records);
        }
        assertThat(reading.bytes()).as("bytes allocated for a %d-byte batch", input.length)
                .isLessThanOrEqualTo(BASE_ALLOCATION + BYTES_PER_INPUT_BYTE * input.length);
        if (accepted) {
            checkHoldsWhatItsHeaderSays(records.batches().iterator().next(), toCompacted);
            if (++appends >= APPENDS_PER_LOG) {
                reopen();
            }
        }
    }

    private static boolean append(PartitionLog log, MemoryRecords records) throws IOException {
        try {
            log.append(records);
            return true;
        } catch (ApiException e) {
            assertThat(Errors.forException(e)).as("error for %s", e.toString()).isNotEqualTo(Errors.UNKNOWN_SERVER_ERROR);
            return false;
        }
    }

    /** CRC-32C of everything after the CRC field, written where the v2 header keeps it. */
    static void fixCrc(ByteBuffer batch) {
        int crcOffset = 17;
        int attributesOffset = 21;
        if (batch.remaining() < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
            return;
        }
        int size = batch.getInt(8) + 12; // base offset and length fields, then the length's bytes
        int end = size < attributesOffset || size > batch.remaining() ? batch.remaining() : size;
        long crc = Crc32C.compute(batch, attributesOffset, end - attributesOffset);
        ByteUtils.writeUnsignedInt(batch, crcOffset, crc);
    }

    private static void checkHoldsWhatItsHeaderSays(MutableRecordBatch batch, boolean keysRequired) {
        long expected = batch.baseOffset();
        try (CloseableIterator<Record> it = batch.skipKeyValueIterator(
                BufferSupplier.NO_CACHING)) {
            while (it.hasNext()) {
                Record r = it.next();
                assertThat(r.offset()).as("offset of record %d", expected - batch.baseOffset()).isEqualTo(expected);
                if (keysRequired) {
                    assertThat(r.hasKey()).as("a key on a compacted log").isTrue();
                }
                expected++;
            }
        }
        assertThat(expected - 1).as("last offset of the accepted batch").isEqualTo(batch.lastOffset());
    }

    private static void reopen() throws IOException {
        if (plain != null) {
            plain.close();
            compacted.close();
        }
        appends = 0;
        generation++;
        LogConfig d = LogConfig.defaults();
        plain = PartitionLog.open(root.resolve("plain-" + generation), new LogConfig(1 << 20, d.segmentMs(),
                d.retentionMs(), d.retentionBytes(), MAX_MESSAGE_BYTES, d.indexIntervalBytes(), false,
                Durability.NONE), CLOCK);
        compacted = PartitionLog.open(root.resolve("compacted-" + generation), new LogConfig(1 << 20,
                d.segmentMs(), d.retentionMs(), d.retentionBytes(), MAX_MESSAGE_BYTES, d.indexIntervalBytes(), false,
                Durability.NONE, new CleanupPolicy(false, true)), CLOCK);
        if (generation > 1) {
            TestFiles.deleteTree(root.resolve("plain-" + (generation - 1)));
            TestFiles.deleteTree(root.resolve("compacted-" + (generation - 1)));
        }
    }

}
