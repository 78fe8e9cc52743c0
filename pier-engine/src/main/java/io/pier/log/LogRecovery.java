package io.pier.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a partition directory back to a consistent log when it is opened: every batch is
 * CRC-checked, indexes and producer state are rebuilt, a torn tail past the recovery point is cut
 * off, and damage inside the fsynced region is reported instead of being served. Used once per
 * open by the owner thread.
 *
 * <p>Checking the whole log (not only the unsynced tail) costs one sequential read of the
 * partition at startup; it is what lets a flipped bit in old data stop the broker instead of
 * reaching consumers. A producer-state snapshot would let a later version skip synced segments.
 *
 * <p>The same pass rebuilds transaction state: transactional batches open their producer's
 * transaction, and each end marker (a control batch whose record key says COMMIT or ABORT) ends
 * it, an ABORT adding to the aborted transactions. Only whole, valid batches are replayed, so a
 * torn tail takes its half-written transaction records (or marker) away with it.
 */
final class LogRecovery {
    private static final Logger log = LoggerFactory.getLogger(LogRecovery.class);

    /** The recovered segments, in offset order, and the producer state they imply. */
    record Result(TreeMap<Long, LogSegment> segments, ProducerStateTable producers, AbortedTransactions aborted,
            boolean changedFiles) {}

    private final Path dir;
    private final FileIO io;
    private final int indexIntervalBytes;
    private final long nowWallMs;
    private final ProducerStateTable producers = new ProducerStateTable();
    private final AbortedTransactions aborted = new AbortedTransactions();
    private boolean changedFiles;

    LogRecovery(Path dir, int indexIntervalBytes, long nowWallMs, FileIO io) {
        this.dir = dir;
        this.io = io;
        this.indexIntervalBytes = indexIntervalBytes;
        this.nowWallMs = nowWallMs;
    }

    /**
     * Recovers the segments of {@code dir}. Returns an empty segment map when the directory holds
     * no segment; the caller then creates the first one.
     *
     * @throws IOException if data the recovery point marks as fsynced is damaged or missing
     */
    Result recover(RecoveryPoint point) throws IOException {
        List<Long> bases = listSegmentsAndDropLeftovers();
        TreeMap<Long, LogSegment> segments = new TreeMap<>();
        if (bases.isEmpty()) {
            if (point != null) {
                throw new IOException("no segment files in " + dir + " although " + RecoveryPoint.FILE_NAME
                        + " records fsynced data up to segment " + point.segmentBaseOffset());
            }
            return new Result(segments, producers, aborted, false);
        }
        try {
            return recoverSegments(usablePoint(point, bases), bases, segments);
        } catch (IOException | RuntimeException e) {
            LogSegment.closeAllAfter(segments.values(), e);
            throw e;
        }
    }

    private Result recoverSegments(RecoveryPoint point, List<Long> bases, TreeMap<Long, LogSegment> segments)
            throws IOException {
        long expectedNext = bases.get(0);
        for (int i = 0; i < bases.size(); i++) {
            long base = bases.get(i);
            long syncedLimit = syncedLimit(point, base);
            if (base != expectedNext) {
                if (syncedLimit > 0) {
                    throw new IOException("segment " + file(base) + " starts at offset " + base + " but the previous"
                            + " segment ends at " + expectedNext + ", inside the fsynced region");
                }
                log.warn("Deleting segments from {}: offset gap after {} in unsynced data", file(base), expectedNext);
                deleteFrom(bases, i);
                break;
            }
            LogSegment seg = LogSegment.openForRecovery(dir, base, io);
            segments.put(base, seg);
            if (point != null && base == point.segmentBaseOffset() && point.position() > seg.size()) {
                throw new IOException(seg.file() + " is " + seg.size() + " bytes but " + point.position()
                        + " bytes were recorded as fsynced");
            }
            Scan scan = scan(seg, syncedLimit);
            int validEnd = scan.validEnd();
            if (validEnd < seg.size() && scan.zeroTail()) {
                // Preallocated zeros a crash left behind (see LogSegment): the data ends here, and
                // any later segment is checked as usual, starting where this one ends.
                log.info("Cutting {} bytes of preallocated zeros off {}", seg.size() - validEnd, seg.file());
                seg.truncateTo(validEnd);
                changedFiles = true;
            } else if (validEnd < seg.size()) {
                log.warn("Truncating {} from {} to {} bytes: torn or corrupt tail", seg.file(), seg.size(), validEnd);
                seg.truncateTo(validEnd);
                changedFiles = true;
                deleteFrom(bases, i + 1);
                expectedNext = seg.nextOffset();
                break;
            }
            expectedNext = seg.nextOffset();
        }
        for (LogSegment seg : segments.values()) {
            seg.finishRecovery();
        }
        return new Result(segments, producers, aborted, changedFiles);
    }

    /**
     * A recovery point naming a segment that retention has since deleted says nothing about the
     * remaining ones, so it is dropped; one naming a segment beyond the newest means files are lost.
     */
    private RecoveryPoint usablePoint(RecoveryPoint point, List<Long> bases) throws IOException {
        if (point == null || bases.contains(point.segmentBaseOffset())) {
            return point;
        }
        if (point.segmentBaseOffset() < bases.get(0)) {
            return null;
        }
        throw new IOException("segment " + file(point.segmentBaseOffset()) + " is missing although "
                + RecoveryPoint.FILE_NAME + " records it as fsynced");
    }

    /** Bytes at the start of segment {@code base} that were fsynced before the last checkpoint. */
    private static long syncedLimit(RecoveryPoint point, long base) {
        if (point == null || base > point.segmentBaseOffset()) {
            return 0;
        }
        return base < point.segmentBaseOffset() ? Long.MAX_VALUE : point.position();
    }

    /**
     * Where a segment's valid data ends, and whether only zeros follow it: the preallocated end of
     * a file whose owner died before cutting it ({@link LogSegment#preallocate}).
     */
    private record Scan(int validEnd, boolean zeroTail) {}

    /**
     * Replays every whole, valid batch of {@code seg} and returns where the valid data ends.
     * Damage below {@code syncedLimit} is fatal. Zeros after the data are not damage once the
     * data reaches the synced limit, or when the whole segment counts as synced (a segment below
     * the recovery point's): batches lost under zeros there would leave an offset gap before the
     * next segment, which the caller refuses inside the synced region.
     */
    private Scan scan(LogSegment seg, long syncedLimit) throws IOException {
        int validEnd = 0;
        long expectedNext = seg.baseOffset();
        String problem = null;
        try {
            for (FileChannelRecordBatch b : seg.batchesFrom(0)) {
                problem = check(b, expectedNext, seg.baseOffset());
                if (problem != null) {
                    break;
                }
                long last = b.lastOffset();
                if (validEnd == 0) {
                    // The age of a recovered segment counts from its first batch, as in Kafka,
                    // but never from the future.
                    long ts = b.maxTimestamp();
                    seg.setFirstAppendWallMs(ts < 0 ? nowWallMs : Math.min(ts, nowWallMs));
                }
                seg.onBatch(validEnd, b.sizeInBytes(), last, b.maxTimestamp(), indexIntervalBytes);
                replayProducerState(dir, b, producers, aborted);
                validEnd += b.sizeInBytes();
                expectedNext = last + 1;
            }
        } catch (KafkaException e) {
            problem = "unreadable batch: " + e.getMessage();
        }
        if (problem == null && validEnd < seg.size()) {
            problem = "incomplete batch, " + (seg.size() - validEnd) + " trailing bytes";
        }
        if (problem == null) {
            return new Scan(validEnd, false);
        }
        boolean zeroTail = (validEnd >= syncedLimit || syncedLimit == Long.MAX_VALUE) && seg.onlyZerosFrom(validEnd);
        if (!zeroTail && validEnd < syncedLimit) {
            throw new IOException("corrupt log " + seg.file() + " at position " + validEnd + " inside the fsynced"
                    + " region: " + problem);
        }
        return new Scan(validEnd, zeroTail);
    }

    /**
     * Replays one whole, valid batch into {@code producers} and {@code aborted}: a data batch with
     * a producer id is recorded (a transactional one starts its producer's transaction), an end
     * marker ends the transaction and, for an ABORT, adds it to {@code aborted}. The one rule for
     * a batch already in the log, used by this scan and by {@link PartitionLog#appendMirrored}, so
     * that a mirrored batch leaves the same state before and after a reopen.
     */
    static void replayProducerState(Path dir, RecordBatch b, ProducerStateTable producers,
            AbortedTransactions aborted) {
        if (!b.hasProducerId()) {
            return;
        }
        long last = b.lastOffset();
        if (!b.isControlBatch()) {
            long joined = producers.record(b.producerId(), b.producerEpoch(), b.baseSequence(), b.lastSequence(),
                    b.baseOffset(), last, b.isTransactional());
            if (joined >= 0) {
                warnJoinedOlderTransaction(dir, b, b.baseOffset(), joined);
            }
            producers.recordTimestamp(b.producerId(), b.maxTimestamp());
            return;
        }
        EndTransactionMarker marker = endMarkerOf(b); // checked to decode before the batch was kept
        if (marker == null) {
            return;
        }
        long first = producers.endTransaction(b.producerId(), b.producerEpoch(), marker.coordinatorEpoch(), last);
        producers.recordTimestamp(b.producerId(), b.maxTimestamp());
        if (marker.controlType() == ControlRecordType.ABORT && first >= 0) {
            aborted.add(b.producerId(), first, last);
        }
    }

    /**
     * A transactional batch of a newer producer epoch joined a transaction begun under an older
     * one (see {@link ProducerStateTable#record}): the older one's end marker is missing from this
     * partition, so whatever ends the transaction now decides both. Said on append and on every
     * replay of such a batch, with what a read_committed anomaly needs to be traced to it.
     */
    static void warnJoinedOlderTransaction(Path dir, RecordBatch b, long baseOffset, long txnFirstOffset) {
        log.warn("{}: transactional batch at offset {} of producer {} epoch {} joins the transaction begun at offset"
                + " {} under an older epoch, whose end marker is missing", dir, baseOffset, b.producerId(),
                b.producerEpoch(), txnFirstOffset);
    }

    /** The end-transaction marker a control batch holds, or null for another kind of control record. */
    private static EndTransactionMarker endMarkerOf(RecordBatch b) {
        Iterator<Record> records = b.iterator();
        if (!records.hasNext()) {
            return null;
        }
        Record r = records.next();
        ControlRecordType type = ControlRecordType.parse(r.key());
        return type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT
                ? EndTransactionMarker.deserialize(r) : null;
    }

    /**
     * Why the batch cannot be kept, or null if it can. Its base offset may lie above
     * {@code expectedNext}: a mirrored log keeps the offsets its upstream skipped as gaps (see
     * {@link PartitionLog#appendMirrored}), as Kafka's logs have gaps after compaction. Offsets
     * that go back, or a batch ending before it begins, are damage. (Segments stay contiguous:
     * each begins where the one before ends, so a gap never lies between two segment files.)
     */
    private static String check(FileChannelRecordBatch b, long expectedNext, long segmentBase) {
        if (b.magic() != RecordBatch.MAGIC_VALUE_V2) {
            return "unexpected magic " + b.magic();
        }
        if (!b.isValid()) {
            return "checksum mismatch or malformed batch";
        }
        if (b.baseOffset() < expectedNext) {
            return "batch offset " + b.baseOffset() + " goes back below " + expectedNext;
        }
        long last = b.lastOffset();
        if (last < b.baseOffset() || last - segmentBase > Integer.MAX_VALUE) {
            return "impossible last offset " + last;
        }
        return contentProblem(b);
    }

    /**
     * Why a v2 batch whose checksum matches cannot be kept, whatever its offsets, or null if it
     * can: a compression codec that does not exist, or a control batch that is compressed or whose
     * record cannot be decoded. Also the check of {@link PartitionLog#appendMirrored}, so that a
     * mirror appends only batches this scan keeps.
     */
    static String contentProblem(RecordBatch b) {
        CompressionType compression;
        try {
            compression = b.compressionType();
        } catch (IllegalArgumentException e) { // attribute bits 0-2 hold 5, 6 or 7: no codec at all
            return "unknown compression: " + e.getMessage();
        }
        if (b.isControlBatch()) {
            // Control batches are written uncompressed (Pier's end markers, and those of a Kafka
            // upstream that a mirror copies; produce refuses control batches), so a compressed one
            // is damage: it is not handed to a decompressor. The marker is decoded here, before
            // the batch counts, so that one that cannot be decoded cuts the log at this batch like
            // any other damage.
            if (compression != CompressionType.NONE) {
                return "control batch compressed with " + compression.name;
            }
            try {
                endMarkerOf(b);
            } catch (RuntimeException e) {
                // Kafka's record decoders throw more than KafkaException on bad bytes: an
                // IllegalArgumentException for an overlong varint, a NullPointerException for a
                // missing key or value, a BufferUnderflowException for a short marker. Only
                // these bytes are decoded here, so whatever they throw means damage (as on
                // produce, BatchValidator.checkRecords).
                return "undecodable control batch: " + e;
            }
        }
        return null;
    }

    private List<Long> listSegmentsAndDropLeftovers() throws IOException {
        List<Long> bases = new ArrayList<>();
        Map<Path, Long> others = new HashMap<>(); // index or temp file -> its segment's base (null: none)
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                Long base = baseOffsetOf(name, LogSegment.LOG_SUFFIX);
                if (base != null) {
                    bases.add(base);
                } else if (name.endsWith(".tmp")) {
                    others.put(p, null);
                } else {
                    Long indexBase = baseOffsetOf(name, LogSegment.INDEX_SUFFIX);
                    if (indexBase == null) {
                        indexBase = baseOffsetOf(name, LogSegment.TIME_INDEX_SUFFIX);
                    }
                    if (indexBase != null) {
                        others.put(p, indexBase);
                    }
                }
            }
        }
        bases.sort(null);
        // Indexes are rebuilt anyway; dropping orphans (no .log) and unfinished temp files keeps the
        // directory tidy.
        Set<Long> segmentBases = new HashSet<>(bases);
        for (Map.Entry<Path, Long> e : others.entrySet()) {
            if (e.getValue() == null || !segmentBases.contains(e.getValue())) {
                io.deleteIfExists(e.getKey());
                changedFiles = true;
            }
        }
        return bases;
    }

    private static Long baseOffsetOf(String name, String suffix) {
        if (!name.endsWith(suffix) || name.length() != 20 + suffix.length()) {
            return null;
        }
        String digits = name.substring(0, 20);
        for (int i = 0; i < 20; i++) {
            if (!Character.isDigit(digits.charAt(i))) {
                return null;
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private void deleteFrom(List<Long> bases, int from) throws IOException {
        for (int i = from; i < bases.size(); i++) {
            long base = bases.get(i);
            log.warn("Deleting segment {} after the recovered end of the log", file(base));
            for (String suffix : new String[] {LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX,
                LogSegment.TIME_INDEX_SUFFIX}) {
                io.deleteIfExists(dir.resolve(LogSegment.fileName(base, suffix)));
            }
            changedFiles = true;
        }
    }

    private Path file(long base) {
        return dir.resolve(LogSegment.fileName(base, LogSegment.LOG_SUFFIX));
    }
}
