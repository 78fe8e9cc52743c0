package io.pier.log;

import static io.pier.log.TestBatches.GZIP;
import static io.pier.log.TestBatches.batchBaseOffsets;
import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.withSegmentBytes;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log that mirrors an upstream Kafka partition: {@link PartitionLog#appendMirrored} keeps the
 * upstream's batches as they are, at their offsets, gaps included, with the transaction state
 * they imply; {@link PartitionLog#restartMirrorAt} empties it at another offset.
 *
 * <p>The "upstream" batches are built here with kafka-clients as a Kafka broker stores them: each
 * record at offset {@code o} has key {@code k<o>}, value {@code v<o>} and timestamp
 * {@code T0 + o}, and every batch carries the upstream's leader epoch, which the mirror keeps.
 */
class PartitionLogMirrorTest {
    private static final long T0 = 1_700_000_000_000L;
    private static final long A = 100;
    private static final long B = 200;
    private static final long C = 300;
    private static final long D = 400;
    private static final int UPSTREAM_LEADER_EPOCH = 7;
    private static final int COORDINATOR_EPOCH = 3;
    private static final Compression ZSTD = Compression.zstd().build();
    /** Smaller than any two batches: every batch goes into a segment of its own. */
    private static final long ONE_BATCH_PER_SEGMENT = 100;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(PartitionLog::close);
    }

    private Path dir() {
        return tmp.resolve("mirror-0");
    }

    private PartitionLog open(LogConfig config) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), config, clock);
        opened.add(log);
        return log;
    }

    private PartitionLog reopen(PartitionLog log) throws IOException {
        log.close();
        return open(log.config());
    }

    private static LogConfig none(long segmentBytes) {
        return withSegmentBytes(config(Durability.NONE), segmentBytes);
    }

    // Upstream batches.

    private static MemoryRecords plain(Compression compression, long base, int count) {
        return upstream(compression, base, count, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                RecordBatch.NO_SEQUENCE, false);
    }

    private static MemoryRecords plain(long base, int count) {
        return plain(Compression.NONE, base, count);
    }

    private static MemoryRecords idempotent(Compression compression, long base, int count, long producerId,
            short epoch, int firstSeq) {
        return upstream(compression, base, count, producerId, epoch, firstSeq, false);
    }

    private static MemoryRecords txn(long base, int count, long producerId, short epoch, int firstSeq) {
        return upstream(Compression.NONE, base, count, producerId, epoch, firstSeq, true);
    }

    private static MemoryRecords upstream(Compression compression, long base, int count, long producerId,
            short epoch, int firstSeq, boolean transactional) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(256), RecordBatch.CURRENT_MAGIC_VALUE,
                compression, TimestampType.CREATE_TIME, base, RecordBatch.NO_TIMESTAMP, producerId, epoch, firstSeq,
                transactional, UPSTREAM_LEADER_EPOCH);
        for (long o = base; o < base + count; o++) {
            b.appendWithOffset(o, T0 + o, key(o), value(o));
        }
        return b.build();
    }

    /**
     * A batch as compaction leaves it: its base offset kept, only the records at {@code offsets}
     * left, so it holds gaps itself and may begin above its first record.
     */
    private static MemoryRecords compacted(long base, long... offsets) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(256), Compression.NONE,
                TimestampType.CREATE_TIME, base);
        for (long o : offsets) {
            b.appendWithOffset(o, T0 + o, key(o), value(o));
        }
        return b.build();
    }

    private static MemoryRecords marker(long offset, long producerId, short epoch, boolean commit) {
        return MemoryRecords.withEndTransactionMarker(offset, T0 + offset, UPSTREAM_LEADER_EPOCH, producerId, epoch,
                new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
                        COORDINATOR_EPOCH));
    }

    private static byte[] key(long offset) {
        return ("k" + offset).getBytes(UTF_8);
    }

    private static byte[] value(long offset) {
        return ("v" + offset).getBytes(UTF_8);
    }

    /**
     * A Fetch answer: the batches back to back, starting a few bytes into their buffer, so that
     * the log has to take each batch from where it lies, not from the buffer's start.
     */
    private static MemoryRecords answer(MemoryRecords... batches) {
        byte[] bytes = concat(batches);
        int skip = 3;
        byte[] placed = new byte[skip + bytes.length];
        placed[0] = 0x7f; // not a batch: anything read from here is garbage
        System.arraycopy(bytes, 0, placed, skip, bytes.length);
        return MemoryRecords.readableRecords(ByteBuffer.wrap(placed, skip, bytes.length));
    }

    private static byte[] concat(MemoryRecords... batches) {
        int size = 0;
        for (MemoryRecords r : batches) {
            size += r.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (MemoryRecords r : batches) {
            out.put(r.buffer());
        }
        return out.array();
    }

    /** The first {@code size} bytes of {@code records}, as a Fetch answer cut at its byte limit leaves them. */
    private static byte[] prefix(MemoryRecords records, int size) {
        byte[] out = new byte[size];
        records.buffer().get(out);
        return out;
    }

    // Reading back.

    /** Each record as "offset key value timestamp". */
    private static List<String> recordsOf(MemoryRecords records) {
        List<String> out = new ArrayList<>();
        for (Record r : records.records()) {
            out.add(r.offset() + " " + UTF_8.decode(r.key()) + " " + UTF_8.decode(r.value()) + " " + r.timestamp());
        }
        return out;
    }

    /** What {@link #recordsOf} gives for upstream records at {@code offsets}. */
    private static List<String> expected(long... offsets) {
        List<String> out = new ArrayList<>();
        for (long o : offsets) {
            out.add(o + " k" + o + " v" + o + " " + (T0 + o));
        }
        return out;
    }

    private static long[] range(long from, long toExclusive) {
        long[] out = new long[(int) (toExclusive - from)];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    private static MemoryRecords readAll(PartitionLog log, long from) throws IOException {
        return log.read(from, Integer.MAX_VALUE, false).records();
    }

    private static byte[] bytesOf(MemoryRecords records) {
        byte[] out = new byte[records.sizeInBytes()];
        records.buffer().get(out);
        return out;
    }

    /** What a Fetch would send of {@code records}, straight from the segment files. */
    private static byte[] bytesOf(SegmentRecords records) throws IOException {
        Send send = records.toSend();
        CollectingChannel out = new CollectingChannel(1 << 20);
        for (int i = 0; i < 100 && !send.completed(); i++) {
            send.writeTo(out);
        }
        assertThat(send.completed()).isTrue();
        return out.bytes.toByteArray();
    }

    private long[] segmentBases() throws IOException {
        try (Stream<Path> s = Files.list(dir())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log"))
                    .mapToLong(n -> Long.parseLong(n.substring(0, 20))).sorted().toArray();
        }
    }

    // Offsets, bytes and records as the upstream has them.

    @Test
    void shouldServeTheUpstreamBatchesByteForByteAtTheirOffsetsAcrossSegments() throws IOException {
        PartitionLog log = open(none(ONE_BATCH_PER_SEGMENT));
        log.restartMirrorAt(1000);
        MemoryRecords first = plain(1000, 3);
        MemoryRecords second = idempotent(GZIP, 1003, 3, A, (short) 0, 0);
        MemoryRecords third = idempotent(ZSTD, 1006, 2, A, (short) 0, 3);
        MemoryRecords fourth = plain(1008, 1);

        assertThat(log.appendMirrored(answer(first, second))).isEqualTo(2);
        assertThat(log.appendMirrored(answer(third, fourth))).isEqualTo(2);

        assertThat(log.logStartOffset()).isEqualTo(1000);
        assertThat(log.logEndOffset()).isEqualTo(1009);
        assertThat(segmentBases()).containsExactly(1000, 1003, 1006, 1008);
        assertThat(bytesOf(readAll(log, 1000))).as("offsets, leader epoch, producer, compression as upstream")
                .isEqualTo(concat(first, second, third, fourth));
        assertThat(recordsOf(readAll(log, 1000))).isEqualTo(expected(range(1000, 1009)));
        assertThat(bytesOf(log.readInPlace(1004, Integer.MAX_VALUE, false).records()))
                .as("from the batch holding 1004").isEqualTo(concat(second, third, fourth));
        List<ActiveProducer> producers = List.of(new ActiveProducer(A, (short) 0, 4, T0 + 1007, -1, -1));
        assertThat(log.activeProducers()).isEqualTo(producers);

        PartitionLog reopened = reopen(log);
        assertThat(reopened.logStartOffset()).isEqualTo(1000);
        assertThat(reopened.logEndOffset()).isEqualTo(1009);
        assertThat(bytesOf(readAll(reopened, 1000))).isEqualTo(concat(first, second, third, fourth));
        assertThat(reopened.activeProducers()).isEqualTo(producers);
    }

    @Test
    void shouldMakeEachMirroredAppendVisibleAtOnceWithoutDurability() throws IOException {
        PartitionLog log = open(config(Durability.NONE));

        log.appendMirrored(plain(0, 2));
        assertThat(log.highWatermark()).isEqualTo(log.logEndOffset()).isEqualTo(2);
        log.appendMirrored(answer(plain(2, 3), plain(9, 1))); // with a gap
        assertThat(log.highWatermark()).isEqualTo(log.logEndOffset()).isEqualTo(10);
        log.appendMirrored(answer(plain(5, 1), plain(10, 2))); // the first one already mirrored
        assertThat(log.highWatermark()).isEqualTo(log.logEndOffset()).isEqualTo(12);
        assertThat(recordsOf(log.read(0, Integer.MAX_VALUE, false).records()))
                .isEqualTo(expected(0, 1, 2, 3, 4, 9, 10, 11));
    }

    @Test
    void shouldCommitMirroredAppendsAtTheNextFlushUnderDurable() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE));

        log.appendMirrored(answer(plain(0, 2), plain(4, 1)));
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(log.highWatermark()).isZero();
        log.flush();
        assertThat(log.highWatermark()).isEqualTo(5);
    }

    // Gaps.

    @Test
    void shouldAppendABatchAboveTheEndAtItsOwnOffsetsAndReadAcrossTheGap() throws IOException {
        PartitionLog log = open(none(ONE_BATCH_PER_SEGMENT));

        assertThat(log.appendMirrored(answer(plain(0, 3), compacted(10, 11, 13)))).isEqualTo(2);
        assertThat(log.logEndOffset()).isEqualTo(14);
        assertThat(log.appendMirrored(plain(GZIP, 20, 2))).isEqualTo(1);

        assertThat(log.logEndOffset()).isEqualTo(22);
        assertThat(log.highWatermark()).isEqualTo(22);
        // A segment begins where the one before ends; a gap lies at the start of the next one.
        assertThat(segmentBases()).containsExactly(0, 3, 14);
        assertThat(recordsOf(readAll(log, 0))).isEqualTo(expected(0, 1, 2, 11, 13, 20, 21));
        assertThat(batchBaseOffsets(readAll(log, 5))).as("from inside the gap: the next batch")
                .containsExactly(10L, 20L);
        assertThat(batchBaseOffsets(readAll(log, 12))).as("inside the compacted batch").containsExactly(10L, 20L);
        assertThat(batchBaseOffsets(readAll(log, 14))).containsExactly(20L);
        assertThat(batchBaseOffsets(readAll(log, 17))).containsExactly(20L);

        PartitionLog reopened = reopen(log);
        assertThat(reopened.logEndOffset()).as("recovery keeps batches after a gap").isEqualTo(22);
        assertThat(segmentBases()).containsExactly(0, 3, 14);
        assertThat(recordsOf(readAll(reopened, 0))).isEqualTo(expected(0, 1, 2, 11, 13, 20, 21));
        assertThat(batchBaseOffsets(readAll(reopened, 5))).containsExactly(10L, 20L);
    }

    @Test
    void shouldFindEveryOffsetAcrossGapsInsideOneSegmentThroughItsIndexes() throws IOException {
        // An index entry for every batch after the first, so that lookups go through the index.
        LogConfig everyBatchIndexed = new LogConfig(1 << 20, Long.MAX_VALUE, -1, -1, 1048588, 0, false,
                Durability.NONE);
        PartitionLog log = open(everyBatchIndexed);
        long[][] batches = {{0, 1}, {5, 6}, {9, 9}, {100, 101}, {1000, 1002}};
        List<MemoryRecords> upstream = new ArrayList<>();
        for (long[] b : batches) {
            upstream.add(plain(b[0], (int) (b[1] - b[0] + 1)));
        }
        assertThat(log.appendMirrored(answer(upstream.toArray(MemoryRecords[]::new)))).isEqualTo(5);
        assertThat(log.segmentCount()).isOne();

        assertEveryOffsetFindsItsBatch(log, batches);
        assertThat(log.offsetForTimestamp(T0 + 50)).isEqualTo(new OffsetAndTimestamp(100, T0 + 100));

        PartitionLog reopened = reopen(log); // indexes rebuilt by the recovery scan
        assertEveryOffsetFindsItsBatch(reopened, batches);
        assertThat(reopened.offsetForTimestamp(T0 + 50)).isEqualTo(new OffsetAndTimestamp(100, T0 + 100));
    }

    /** A fetch at any offset up to the end starts with the batch holding it, or in a gap the next one. */
    private static void assertEveryOffsetFindsItsBatch(PartitionLog log, long[][] batches) throws IOException {
        long end = batches[batches.length - 1][1] + 1;
        assertThat(log.logEndOffset()).isEqualTo(end);
        int batch = 0;
        for (long o = 0; o < end; o++) {
            if (o > batches[batch][1]) {
                batch++;
            }
            MemoryRecords read = log.read(o, Integer.MAX_VALUE, true).records();
            assertThat(batchBaseOffsets(read).get(0)).as("fetch at %d", o).isEqualTo(batches[batch][0]);
            assertThat(batchBaseOffsets(read)).hasSize(batches.length - batch);
        }
    }

    @Test
    void shouldRefuseABatchTooFarAboveTheEndForOneSegmentUnlessTheLogHoldsNoRecord() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.appendMirrored(plain(0, 2));
        long far = 3_000_000_000L;

        assertThatThrownBy(() -> log.appendMirrored(plain(far, 2))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(far + "..").hasMessageContaining("too far above the log end offset 2 ");
        assertThat(log.logEndOffset()).isEqualTo(2);

        log.restartMirrorAt(5);
        assertThat(log.appendMirrored(plain(far, 2))).isEqualTo(1);
        assertThat(log.logStartOffset()).isEqualTo(far);
        assertThat(log.logEndOffset()).isEqualTo(far + 2);
        assertThat(recordsOf(readAll(reopen(log), far))).isEqualTo(expected(far, far + 1));
    }

    // A Fetch answer's edges: a cut last batch, refetched batches, a batch across the end.

    @Test
    void shouldLeaveOutATruncatedLastBatchUntilItComesWhole() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        MemoryRecords first = plain(0, 2);
        MemoryRecords second = idempotent(GZIP, 2, 3, A, (short) 0, 0);
        byte[] cut = prefix(second, second.sizeInBytes() - 10);

        MemoryRecords answer = MemoryRecords.readableRecords(ByteBuffer.wrap(concat(first,
                MemoryRecords.readableRecords(ByteBuffer.wrap(cut)))));
        assertThat(log.appendMirrored(answer)).isEqualTo(1);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(log.activeProducers()).as("nothing of the cut batch counted").isEmpty();

        MemoryRecords onlyAHeaderPiece = MemoryRecords.readableRecords(ByteBuffer.wrap(prefix(second, 8)));
        assertThat(log.appendMirrored(onlyAHeaderPiece)).isZero();
        assertThat(log.logEndOffset()).isEqualTo(2);

        assertThat(log.appendMirrored(answer(first, second))).isEqualTo(1);
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(bytesOf(readAll(log, 0))).isEqualTo(concat(first, second));
        assertThat(recordsOf(readAll(log, 0))).isEqualTo(expected(range(0, 5)));
    }

    @Test
    void shouldSkipBatchesAlreadyMirrored() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        MemoryRecords a = plain(0, 3);
        MemoryRecords b = plain(3, 2);
        MemoryRecords c = plain(5, 2);
        assertThat(log.appendMirrored(answer(a, b))).isEqualTo(2);

        assertThat(log.appendMirrored(answer(a, b, c))).isEqualTo(1);
        assertThat(log.appendMirrored(b)).isZero();

        assertThat(log.logEndOffset()).isEqualTo(7);
        assertThat(bytesOf(readAll(log, 0))).as("each batch once").isEqualTo(concat(a, b, c));
    }

    @Test
    void shouldRefuseABatchAcrossTheEndOfALogHoldingRecordsAndAppendNothingOfTheAnswer() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.appendMirrored(plain(0, 5));
        long size = log.sizeInBytes();

        assertThatThrownBy(() -> log.appendMirrored(plain(3, 4))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("offsets 3..6 straddles the log end offset 5 ");
        assertThatThrownBy(() -> log.appendMirrored(answer(plain(5, 2), plain(6, 3))))
                .as("the second batch straddles the end the first one makes")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("offsets 6..8 straddles the log end offset 7 ");

        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(log.sizeInBytes()).isEqualTo(size);
        assertThat(log.appendMirrored(answer(plain(5, 2), plain(7, 2)))).isEqualTo(2);
        assertThat(recordsOf(readAll(log, 0))).isEqualTo(expected(range(0, 9)));
    }

    @Test
    void shouldRestartALogHoldingNoRecordAtTheBaseOfABatchAcrossItsEnd() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.restartMirrorAt(102); // inside the upstream batch 100..104

        assertThat(log.appendMirrored(answer(plain(100, 5), plain(105, 1)))).isEqualTo(2);

        assertThat(log.logStartOffset()).isEqualTo(100);
        assertThat(log.logEndOffset()).isEqualTo(106);
        assertThat(recordsOf(readAll(log, 100))).isEqualTo(expected(range(100, 106)));
        PartitionLog reopened = reopen(log);
        assertThat(reopened.logStartOffset()).isEqualTo(100);
        assertThat(reopened.logEndOffset()).isEqualTo(106);
        assertThat(segmentBases()).containsExactly(100);
    }

    // Transactions.

    @Test
    void shouldHoldTheLastStableOffsetAtAnOpenTransactionUntilItsCommitMarker() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.appendMirrored(plain(0, 1));
        assertThat(log.lastStableOffset()).isEqualTo(1);

        log.appendMirrored(txn(1, 2, A, (short) 3, 0));
        log.appendMirrored(idempotent(Compression.NONE, 3, 1, C, (short) 0, 0));
        log.appendMirrored(txn(4, 1, A, (short) 3, 2));
        assertThat(log.lastStableOffset()).as("A's transaction began at 1").isEqualTo(1);
        assertThat(log.highWatermark()).isEqualTo(5);

        log = reopen(log);
        assertThat(log.lastStableOffset()).as("the open transaction replayed").isEqualTo(1);

        log.appendMirrored(marker(5, A, (short) 3, true));
        assertThat(log.lastStableOffset()).isEqualTo(log.highWatermark()).isEqualTo(6);
        assertThat(log.abortedTransactions(0, 6)).isEmpty();
        List<ActiveProducer> producers = List.of(
                new ActiveProducer(A, (short) 3, 2, T0 + 5, COORDINATOR_EPOCH, -1),
                new ActiveProducer(C, (short) 0, 0, T0 + 3, -1, -1));
        assertThat(log.activeProducers()).isEqualTo(producers);

        log = reopen(log);
        assertThat(log.lastStableOffset()).isEqualTo(6);
        assertThat(log.abortedTransactions(0, 6)).isEmpty();
        assertThat(log.activeProducers()).isEqualTo(producers);
    }

    @Test
    void shouldReportATransactionAbortedUpstreamAndKeepItAcrossReopens() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.appendMirrored(answer(
                txn(0, 2, B, (short) 0, 0),            // 0..1 B
                txn(2, 1, A, (short) 0, 0),            // 2 A
                marker(3, B, (short) 0, false),        // 3 B aborts
                marker(4, A, (short) 0, true),         // 4 A commits
                txn(5, 2, C, (short) 0, 0),            // 5..6 C, still open
                marker(7, D, (short) 0, false)));      // 7 a marker for a transaction begun before the mirror

        assertMirroredTransactions(log);
        log = reopen(log);
        assertMirroredTransactions(log);
        log.closeAbruptly();
        log = open(log.config());
        assertMirroredTransactions(log);

        log.appendMirrored(marker(8, C, (short) 0, false));
        assertThat(log.lastStableOffset()).isEqualTo(9);
        assertThat(log.abortedTransactions(0, 9)).containsExactly(new AbortedTransaction(B, 0, 3),
                new AbortedTransaction(C, 5, 8));
    }

    private static void assertMirroredTransactions(PartitionLog log) throws IOException {
        assertThat(log.logEndOffset()).isEqualTo(8);
        assertThat(log.lastStableOffset()).as("C is open from 5").isEqualTo(5);
        assertThat(log.abortedTransactions(0, 8)).containsExactly(new AbortedTransaction(B, 0, 3));
        LogReadResult<SegmentRecords> committed = log.readInPlace(0, Integer.MAX_VALUE, true,
                IsolationLevel.READ_COMMITTED);
        assertThat(committed.lastStableOffset()).isEqualTo(5);
        assertThat(committed.abortedTransactions()).containsExactly(new AbortedTransaction(B, 0, 3));
        assertThat(log.activeProducers()).extracting(ActiveProducer::producerId, ActiveProducer::currentTxnStartOffset)
                .containsExactly(tuple(A, -1L), tuple(B, -1L), tuple(C, 5L), tuple(D, -1L));
    }

    @Test
    void shouldAppendAControlBatchOfAnotherKindWithoutEndingATransaction() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        log.appendMirrored(txn(0, 1, A, (short) 0, 0));
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(128), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 1, RecordBatch.NO_TIMESTAMP, A, (short) 0,
                RecordBatch.NO_SEQUENCE, true, true, UPSTREAM_LEADER_EPOCH);
        b.appendControlRecord(T0 + 1, ControlRecordType.LEADER_CHANGE, ByteBuffer.wrap(new byte[] {1, 2}));

        assertThat(log.appendMirrored(b.build())).isEqualTo(1);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(log.lastStableOffset()).as("still A's transaction").isZero();

        log.appendMirrored(marker(2, A, (short) 0, false));
        assertThat(log.lastStableOffset()).isEqualTo(3);
        assertThat(log.abortedTransactions(0, 3)).containsExactly(new AbortedTransaction(A, 0, 2));
        PartitionLog reopened = reopen(log);
        assertThat(reopened.lastStableOffset()).isEqualTo(3);
        assertThat(reopened.abortedTransactions(0, 3)).containsExactly(new AbortedTransaction(A, 0, 2));
    }

    // Batches a mirror refuses.

    @Test
    void shouldRefuseACorruptBatchBeforeAppendingAnythingOfTheAnswer() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        MemoryRecords good = plain(0, 2);
        MemoryRecords second = idempotent(GZIP, 2, 3, A, (short) 0, 0);
        byte[] flipped = concat(good, second);
        flipped[flipped.length - 3] ^= 0x10; // inside the second batch's compressed records

        assertThatThrownBy(() -> log.appendMirrored(MemoryRecords.readableRecords(ByteBuffer.wrap(flipped))))
                .isInstanceOf(CorruptRecordException.class);

        assertThat(log.logEndOffset()).isZero();
        assertThat(log.sizeInBytes()).isZero();
        assertThat(log.activeProducers()).isEmpty();
        assertThat(log.appendMirrored(answer(good, second))).isEqualTo(2);
        assertThat(recordsOf(readAll(log, 0))).isEqualTo(expected(range(0, 5)));
    }

    @Test
    void shouldRefuseBatchesTheLogCouldNotReplay() throws IOException {
        PartitionLog log = open(config(Durability.NONE));
        MemoryRecordsBuilder v1 = MemoryRecords.builder(ByteBuffer.allocate(128), RecordBatch.MAGIC_VALUE_V1,
                Compression.NONE, TimestampType.CREATE_TIME, 0);
        v1.appendWithOffset(0, T0, key(0), value(0));
        MemoryRecordsBuilder compressedMarker = MemoryRecords.builder(ByteBuffer.allocate(128),
                RecordBatch.CURRENT_MAGIC_VALUE, GZIP, TimestampType.CREATE_TIME, 0, RecordBatch.NO_TIMESTAMP, A,
                (short) 0, RecordBatch.NO_SEQUENCE, true, true, UPSTREAM_LEADER_EPOCH);
        compressedMarker.appendEndTxnMarker(T0, new EndTransactionMarker(ControlRecordType.COMMIT, 0));

        assertThatThrownBy(() -> log.appendMirrored(v1.build()))
                .isInstanceOf(UnsupportedForMessageFormatException.class).hasMessageContaining("magic 1");
        assertThatThrownBy(() -> log.appendMirrored(compressedMarker.build()))
                .isInstanceOf(CorruptRecordException.class).hasMessageContaining("control batch compressed with gzip");
        assertThat(log.logEndOffset()).isZero();
        assertThat(log.sizeInBytes()).isZero();
    }

    @Test
    void shouldRefuseWritesAfterAnIoErrorAsAnyAppend() throws IOException {
        FaultyDisk disk = new FaultyDisk();
        PartitionLog log = PartitionLog.open(dir(), config(Durability.NONE), clock, disk);
        opened.add(log);
        log.appendMirrored(plain(0, 2));
        disk.fill();

        assertThatThrownBy(() -> log.appendMirrored(plain(2, 2))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> log.appendMirrored(plain(2, 2))).isInstanceOf(IOException.class)
                .hasMessageContaining("refuses writes after an earlier I/O error");
        assertThatThrownBy(() -> log.restartMirrorAt(0)).isInstanceOf(IOException.class)
                .hasMessageContaining("refuses writes after an earlier I/O error");
        assertThat(log.logEndOffset()).isEqualTo(2);
    }

    // Restarting a mirror elsewhere.

    @Test
    void shouldRestartForwardAndBackwardEmptyAtTheOffsetAndStayThereAcrossReopen() throws IOException {
        PartitionLog log = open(none(ONE_BATCH_PER_SEGMENT));
        log.restartMirrorAt(100);
        log.appendMirrored(answer(txn(100, 2, B, (short) 0, 0), marker(102, B, (short) 0, false),
                txn(103, 2, A, (short) 0, 0)));
        assertThat(log.segmentCount()).isEqualTo(3);
        assertThat(log.lastStableOffset()).isEqualTo(103);

        log.restartMirrorAt(500); // forward
        assertEmptyAt(log, 500);
        assertThatThrownBy(() -> log.read(100, 1 << 20, true)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(log.appendMirrored(plain(500, 2))).isEqualTo(1);
        PartitionLog reopened = reopen(log);
        assertThat(reopened.logStartOffset()).isEqualTo(500);
        assertThat(recordsOf(readAll(reopened, 500))).isEqualTo(expected(500, 501));
        assertThat(segmentBases()).containsExactly(500);

        reopened.restartMirrorAt(50); // backward, below every segment there was
        assertEmptyAt(reopened, 50);
        assertThat(reopened.appendMirrored(plain(50, 3))).isEqualTo(1);
        PartitionLog again = reopen(reopened);
        assertThat(again.logStartOffset()).isEqualTo(50);
        assertThat(again.logEndOffset()).isEqualTo(53);
        assertThat(recordsOf(readAll(again, 50))).isEqualTo(expected(50, 51, 52));
        assertThat(segmentBases()).containsExactly(50);

        again.restartMirrorAt(50); // where it already starts: the records go all the same
        PartitionLog last = reopen(again);
        assertEmptyAt(last, 50);
    }

    private void assertEmptyAt(PartitionLog log, long offset) throws IOException {
        assertThat(log.logStartOffset()).isEqualTo(offset);
        assertThat(log.logEndOffset()).isEqualTo(offset);
        assertThat(log.highWatermark()).isEqualTo(offset);
        assertThat(log.lastStableOffset()).isEqualTo(offset);
        assertThat(log.abortedTransactions(0, Long.MAX_VALUE)).isEmpty();
        assertThat(log.activeProducers()).isEmpty();
        assertThat(log.segmentCount()).isOne();
        assertThat(segmentBases()).containsExactly(offset);
        assertThat(log.read(offset, 1 << 20, true).records().sizeInBytes()).isZero();
    }

    @Test
    void shouldFailARestartWhileAFlushIsInFlight() throws IOException {
        PartitionLog log = open(config(Durability.DURABLE));
        log.appendMirrored(plain(0, 2));
        LogFlush flush = log.beginFlush();

        assertThatThrownBy(() -> log.restartMirrorAt(10)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("flush is in flight");
        log.completeFlush(flush, flush.force());
        assertThat(log.highWatermark()).isEqualTo(2);
        log.restartMirrorAt(10);
        assertThat(log.highWatermark()).isEqualTo(10);
    }

    /**
     * The process dies after the segments were deleted and the new one created, before the folder
     * was fsynced: the files as they are must open, empty at the new offset. The recovery point
     * that named a deleted segment above it must not be left behind.
     */
    @Test
    void shouldOpenEmptyAtTheOffsetAfterAProcessCrashInTheMiddleOfARestartBackwards() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        LogConfig durable = withSegmentBytes(config(Durability.DURABLE), ONE_BATCH_PER_SEGMENT);
        PartitionLog crashed = PartitionLog.open(dir(), durable, clock, io);
        crashed.restartMirrorAt(100);
        crashed.appendMirrored(answer(plain(100, 2), plain(102, 3)));
        crashed.flush();
        io.arm(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, 1);

        assertThatThrownBy(() -> crashed.restartMirrorAt(10)).isInstanceOf(PowerLossFileIO.SimulatedCrash.class);

        PartitionLog reopened = open(durable);
        assertEmptyAt(reopened, 10);
        assertThat(reopened.appendMirrored(plain(10, 1))).isEqualTo(1);
        reopened.flush();
        assertThat(reopened.highWatermark()).isEqualTo(11);
    }

    /**
     * Power goes at the same step of a restart forwards: the deletions and the new segment are
     * undone, but the new start was made durable first, so the old records stay below it.
     */
    @Test
    void shouldOpenEmptyAtTheOffsetAfterAPowerLossInTheMiddleOfARestartForwards() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        LogConfig durable = withSegmentBytes(config(Durability.DURABLE), ONE_BATCH_PER_SEGMENT);
        PartitionLog crashed = PartitionLog.open(dir(), durable, clock, io);
        crashed.restartMirrorAt(100);
        crashed.appendMirrored(answer(plain(100, 2), plain(102, 3)));
        crashed.flush();
        io.arm(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, 1);

        assertThatThrownBy(() -> crashed.restartMirrorAt(1000))
                .isInstanceOf(PowerLossFileIO.SimulatedCrash.class);
        io.powerLoss(null);

        PartitionLog reopened = open(durable);
        assertThat(reopened.logStartOffset()).isEqualTo(1000);
        assertThat(reopened.logEndOffset()).isEqualTo(1000);
        assertThat(reopened.segmentCount()).isOne();
        assertThat(segmentBases()).containsExactly(1000);
    }
}
