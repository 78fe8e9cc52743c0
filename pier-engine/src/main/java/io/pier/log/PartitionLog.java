package io.pier.log;

import io.pier.common.Clock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

/**
 * One partition's log: a directory of segments holding Kafka v2 record batches exactly as
 * clients send and fetch them.
 *
 * <p><b>Threading.</b> Single owner thread; not thread-safe. Nothing here blocks on anything but
 * the disk.
 *
 * <p>This class appends, rolls, flushes and owns the files' lifecycle; fetches and timestamp
 * lookups are answered by {@link LogReader}, and old segments are deleted by {@link LogRetention}.
 *
 * <p><b>On-disk layout</b> (one directory per partition):
 *
 * <pre>
 *  partition-dir/
 *  |-- 00000000000000000000.log        record batches, offsets 0 .. 4711, back to back
 *  |-- 00000000000000000000.index      sparse: (offset - base : int32, file position : int32) ...
 *  |-- 00000000000000000000.timeindex  sparse: (max timestamp so far : int64, offset - base : int32) ...
 *  |-- 00000000000000004712.log        the active segment; only it is appended to
 *  |-- 00000000000000004712.index
 *  |-- 00000000000000004712.timeindex
 *  |-- recovery-point.checkpoint       "v1 segmentBase position": all bytes before it were fsynced
 *  `-- log-start-offset.checkpoint     "v1 offset": written by DeleteRecords and restartMirrorAt (absent until then)
 *
 *  .log file:  | batch | batch | batch | ... |
 *  batch:      [baseOffset int64][length int32][leaderEpoch int32][magic=2][crc32c][attributes]
 *              [lastOffsetDelta][timestamps][producerId/epoch/baseSequence][count][records...]
 * </pre>
 *
 * <p><b>Invariants.</b> {@code logStartOffset <= highWatermark <= logEndOffset}; offsets
 * increase across segments and are never reused, even after a torn tail is cut off; they are
 * contiguous except in a mirror ({@link #appendMirrored}), which keeps its upstream's offsets and
 * so the gaps between them; each segment begins where the one before it ends. The high watermark
 * never moves back while the log is open, but for {@link #restartMirrorAt}. Under
 * {@link Durability#DURABLE} the high watermark only covers data forced to disk by a flush; under
 * {@link Durability#NONE} it is the log end offset.
 *
 * <p><b>Flushing.</b> {@link #flush()} is a group commit on the owner thread. A broker shard
 * instead cuts it in three ({@link LogFlush}): {@link #beginFlush} says what to force, the force
 * runs on a flusher thread, {@link #completeFlush} moves the high watermark to what was forced.
 * At most one flush is in flight; appends made meanwhile wait for the next. While one is in
 * flight the log writes no recovery point itself (the flush may), so the file has one writer.
 *
 * <p><b>Failure.</b> After an I/O error while writing or forcing, the log refuses further
 * appends and flushes: after a failed fsync the kernel may drop the dirty pages, so a later
 * "successful" fsync would prove nothing. The owner should close the log and reopen it, which
 * re-verifies the files.
 */
public final class PartitionLog implements AutoCloseable {
    /** How often, at most, a flush also moves the recovery checkpoint (it costs two fsyncs and a rename). */
    static final long RECOVERY_POINT_INTERVAL_MS = 5_000;

    private final Path dir;
    private final Clock clock;
    private final FileIO io;
    private final TreeMap<Long, LogSegment> segments;
    private final ProducerStateTable producers;
    private final AbortedTransactions aborted;
    private final LogReader reader;
    private final LogRetention retention;
    /** Reused by {@link BatchValidator} for the compressed batches appended on this log's thread. */
    private final BufferSupplier decompressionBuffers = BufferSupplier.create();
    private LogConfig config;
    private LogSegment active;
    private long logStartOffset;
    private long committedEnd; // the high watermark under DURABLE
    private long flushedEnd;
    private long lastRecoveryPointMonoMs;
    /** A segment file was created since the last flush began: the next one fsyncs the directory. */
    private boolean directoryDirty;
    private LogFlush inFlight;
    private IOException failure;
    private boolean closed;

    private PartitionLog(Path dir, LogConfig config, Clock clock, FileIO io, TreeMap<Long, LogSegment> segments,
            ProducerStateTable producers, AbortedTransactions aborted) {
        this.dir = dir;
        this.io = io;
        this.config = config;
        this.clock = clock;
        this.segments = segments;
        this.producers = producers;
        this.aborted = aborted;
        this.reader = new LogReader(segments);
        this.retention = new LogRetention(segments);
    }

    /**
     * Opens the log in {@code dir}, creating the directory (and making its entry durable) if it
     * does not exist, then recovers it: see {@link LogRecovery}.
     *
     * @throws IOException if the files cannot be read, or data recorded as fsynced is damaged
     */
    public static PartitionLog open(Path dir, LogConfig config, Clock clock) throws IOException {
        return open(dir, config, clock, FileIO.REAL);
    }

    /** As {@link #open(Path, LogConfig, Clock)}, with segment files opened through {@code io}. */
    public static PartitionLog open(Path dir, LogConfig config, Clock clock, FileIO io) throws IOException {
        Path abs = dir.toAbsolutePath();
        AtomicFiles.createDirectories(io, abs);
        RecoveryPoint point = RecoveryPoint.read(abs);
        long storedStart = LogStartOffsetFile.read(abs);
        LogRecovery.Result r = new LogRecovery(abs, config.indexIntervalBytes(), clock.wallMs(), io).recover(point);
        PartitionLog log = new PartitionLog(abs, config, clock, io, r.segments(), r.producers(), r.aborted());
        try {
            log.finishOpen(storedStart);
        } catch (IOException | RuntimeException e) {
            LogSegment.closeAllAfter(log.segments.values(), e);
            throw e;
        }
        return log;
    }

    private void finishOpen(long storedStart) throws IOException {
        if (segments.isEmpty()) {
            segments.put(storedStart, LogSegment.create(dir, storedStart, io));
        }
        active = segments.lastEntry().getValue();
        logStartOffset = Math.max(storedStart, segments.firstKey());
        if (logStartOffset > logEndOffset()) {
            // The stored start lies beyond data lost in a crash (possible under NONE). Starting the
            // log afresh at the stored start keeps offsets below it from being handed out twice.
            startAfreshAt(logStartOffset);
        }
        producers.retainFrom(logStartOffset);
        aborted.retainFrom(logStartOffset);
        // Recovered data may sit only in the page cache (the process died, the OS did not): make
        // it durable before it counts as committed.
        for (LogSegment seg : segments.values()) {
            seg.force();
        }
        io.syncDirectory(dir);
        writeRecoveryPoint();
        committedEnd = logEndOffset();
        flushedEnd = logEndOffset();
    }

    private void startAfreshAt(long offset) throws IOException {
        for (LogSegment seg : segments.values()) {
            seg.closeAndDelete();
        }
        segments.clear();
        active = LogSegment.create(dir, offset, io);
        segments.put(offset, active);
    }

    /**
     * Validates one produced batch, assigns its offsets and appends it to the active segment,
     * without forcing it to disk. {@code records} is a Produce request's data for this partition
     * and must hold exactly one batch; its buffer is modified in place (offsets, leader epoch,
     * LogAppendTime).
     *
     * <p>A transactional batch is checked like an idempotent one (epoch, then sequence) and starts
     * its producer's transaction if none is ongoing; the transaction holds the last stable offset
     * back until {@link #appendEndTxnMarker} ends it.
     *
     * @throws org.apache.kafka.common.errors.ApiException subclasses for invalid input (see
     *     {@link BatchValidator}) and for idempotence violations
     * @throws IOException if writing fails; the log then refuses further writes
     */
    public AppendResult append(MemoryRecords records) throws IOException {
        ensureWritable();
        MutableRecordBatch batch = BatchValidator.validate(records, config, clock.wallMs(), decompressionBuffers);
        if (batch.hasProducerId()) {
            ProducerStateTable.BatchMetadata dup = producers.check(batch.producerId(), batch.producerEpoch(),
                    batch.baseSequence(), batch.lastSequence());
            if (dup != null) {
                return new AppendResult(dup.firstOffset(), dup.lastOffset(), -1, logStartOffset, true);
            }
        }
        long base = logEndOffset();
        long last = base + (batch.lastOffset() - batch.baseOffset());
        long now = clock.wallMs();
        maybeRoll(batch.sizeInBytes(), last, now);
        batch.setLastOffset(last);
        batch.setPartitionLeaderEpoch(0);
        long appendTime = -1;
        if (config.logAppendTime()) {
            batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, now);
            appendTime = now;
        }
        appendToActive(records, last, batch.maxTimestamp(), now);
        if (batch.hasProducerId()) {
            long joined = producers.record(batch.producerId(), batch.producerEpoch(), batch.baseSequence(),
                    batch.lastSequence(), base, last, batch.isTransactional());
            if (joined >= 0) {
                LogRecovery.warnJoinedOlderTransaction(dir, batch, base, joined);
            }
            producers.recordTimestamp(batch.producerId(), batch.maxTimestamp());
        }
        return new AppendResult(base, last, appendTime, logStartOffset, false);
    }

    /**
     * Appends the end-transaction marker (a control batch of one COMMIT or ABORT record, built by
     * kafka-clients) that the transaction coordinator writes for producer {@code producerId}, and
     * ends that producer's ongoing transaction; an ABORT records it as aborted from its first
     * offset up to the marker. A marker for a producer with no ongoing transaction is written all
     * the same, as Kafka does (a retried marker after a coordinator failover). Like any append it
     * is durable and visible only after a flush (under {@link Durability#DURABLE}).
     *
     * @param transactionVersion the coordinator's transaction version: from 2 on every marker
     *     carries a freshly bumped producer epoch, so one with the current epoch is stale too
     * @throws org.apache.kafka.common.errors.InvalidProducerEpochException if the marker's producer
     *     epoch is older than the producer's current one (or not newer, under version 2)
     * @throws org.apache.kafka.common.errors.TransactionCoordinatorFencedException if a newer
     *     coordinator already wrote a marker for this producer
     * @throws IOException if writing fails; the log then refuses further writes
     */
    public AppendResult appendEndTxnMarker(long producerId, short producerEpoch, int coordinatorEpoch,
            boolean commit, short transactionVersion) throws IOException {
        ensureWritable();
        producers.checkMarker(producerId, producerEpoch, coordinatorEpoch, transactionVersion);
        long offset = logEndOffset();
        long now = clock.wallMs();
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
                : ControlRecordType.ABORT, coordinatorEpoch);
        MemoryRecords records = MemoryRecords.withEndTransactionMarker(offset, now, 0, producerId, producerEpoch,
                marker);
        maybeRoll(records.sizeInBytes(), offset, now);
        appendToActive(records, offset, now, now);
        long first = producers.endTransaction(producerId, producerEpoch, coordinatorEpoch, offset);
        producers.recordTimestamp(producerId, now);
        if (!commit && first >= 0) {
            aborted.add(producerId, first, offset);
        }
        return new AppendResult(offset, offset, -1, logStartOffset, false);
    }

    /**
     * Appends record batches fetched from the upstream Kafka partition this log mirrors (gateway
     * mode), exactly as they are: offsets, producer ids, epochs, sequences, timestamps,
     * compression and control batches stay the upstream's, so this log serves the upstream's
     * records at the upstream's offsets. {@code records} is a Fetch answer's data for the
     * partition; a batch cut off at its end (the answer reached its byte limit) is left out, to
     * come whole with the next fetch.
     *
     * <p>No offset is assigned and no sequence checked: the upstream did that. Every batch must
     * still be one this log replays on open (see {@link LogRecovery}), and all are checked before
     * the first is written, so a refused call appends nothing. Each batch, by its offsets against
     * the log end offset:
     *
     * <ul>
     *   <li>wholly below it: skipped, a refetch of what is already here;
     *   <li>above it: appended at its own offsets, leaving a gap of offsets the upstream no longer
     *       has (compaction removes records; Kafka's own logs have such gaps);
     *   <li>across it: appended only if the log holds no record (start = end), which a mirror
     *       restarted inside an upstream batch does; the log then restarts at the batch's base
     *       offset as {@link #restartMirrorAt} does. On a log holding records it is refused.
     * </ul>
     *
     * <p>Producer state follows as on replay: transactional batches start transactions and end
     * markers end them, so {@link #lastStableOffset()} and {@link #abortedTransactions} answer as
     * the upstream does for the offsets mirrored. Under {@link Durability#NONE}, a mirror's
     * setting (it is a cache of the upstream), the batches are readable at once; under
     * {@link Durability#DURABLE} after the next flush, as any append.
     *
     * @return the number of batches appended
     * @throws CorruptRecordException if a batch's checksum does not match, or it cannot be kept for
     *     other damage (offsets, an unknown codec, a control batch that does not decode)
     * @throws UnsupportedForMessageFormatException for a batch older than magic v2
     * @throws IllegalStateException if a batch straddles the end of a log holding records, or starts
     *     2^31 offsets or more above its end (too far for one segment: restart the mirror there); if
     *     the log must restart while a flush is in flight; if the log is closed
     * @throws IOException if writing fails; the log then refuses further writes
     */
    public int appendMirrored(MemoryRecords records) throws IOException {
        ensureWritable();
        List<MutableRecordBatch> complete = completeBatches(records);
        List<MutableRecordBatch> toAppend = new ArrayList<>(complete.size());
        int[] positions = new int[complete.size()];
        long end = logEndOffset();
        boolean holdsRecords = logStartOffset < end;
        long restartAt = -1;
        int position = 0;
        for (MutableRecordBatch batch : complete) {
            checkMirrorable(batch);
            long base = batch.baseOffset();
            long last = batch.lastOffset();
            if (last >= end) {
                if (base < end || last - end > Integer.MAX_VALUE) {
                    if (holdsRecords) {
                        throw new IllegalStateException(base < end
                                ? "mirrored batch at offsets " + base + ".." + last + " straddles the log end offset "
                                        + end + " of " + dir + ", which holds records"
                                : "mirrored batch at offsets " + base + ".." + last + " lies too far above the log end"
                                        + " offset " + end + " of " + dir + " for one segment: restart the mirror");
                    }
                    restartAt = base; // only ever the first batch appended: it makes the log hold records
                }
                positions[toAppend.size()] = position;
                toAppend.add(batch);
                end = last + 1;
                holdsRecords = true;
            }
            position += batch.sizeInBytes();
        }
        if (restartAt >= 0) {
            restartMirrorAt(restartAt);
        }
        for (int i = 0; i < toAppend.size(); i++) {
            MutableRecordBatch batch = toAppend.get(i);
            // The batch's own bytes, in place: batches() reads them back to back from the buffer's position.
            ByteBuffer bytes = records.buffer();
            int start = bytes.position() + positions[i];
            bytes.position(start).limit(start + batch.sizeInBytes());
            long now = clock.wallMs();
            maybeRoll(batch.sizeInBytes(), batch.lastOffset(), now);
            appendToActive(MemoryRecords.readableRecords(bytes.slice()), batch.lastOffset(), batch.maxTimestamp(), now);
            LogRecovery.replayProducerState(dir, batch, producers, aborted);
        }
        return toAppend.size();
    }

    /** The whole batches of a Fetch answer, without a truncated one at its end. */
    private static List<MutableRecordBatch> completeBatches(MemoryRecords records) {
        List<MutableRecordBatch> out = new ArrayList<>();
        try {
            for (MutableRecordBatch batch : records.batches()) { // stops before an incomplete batch
                out.add(batch);
            }
        } catch (CorruptRecordException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new CorruptRecordException("unreadable mirrored record batch: " + e.getMessage(), e);
        }
        return out;
    }

    /** Refuses a batch that recovery would not keep, whatever its offsets. */
    private static void checkMirrorable(MutableRecordBatch batch) {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            throw new UnsupportedForMessageFormatException("mirrored record batch at offset " + batch.baseOffset()
                    + " has magic " + batch.magic() + "; only magic v2 is kept");
        }
        batch.ensureValid(); // size and checksum
        if (batch.baseOffset() < 0 || batch.lastOffset() < batch.baseOffset()) {
            throw new CorruptRecordException("mirrored record batch has impossible offsets " + batch.baseOffset() + ".."
                    + batch.lastOffset());
        }
        String problem = LogRecovery.contentProblem(batch);
        if (problem != null) {
            throw new CorruptRecordException("mirrored record batch at offset " + batch.baseOffset() + ": " + problem);
        }
    }

    /**
     * Empties the log and starts it afresh at {@code offset}, below or above its current start or
     * end: every segment is deleted, producer state and aborted transactions are forgotten, and
     * start, end and high watermark become {@code offset}. For a mirror that must begin elsewhere:
     * earlier, when a share group needs records older than it holds, or later, when the upstream's
     * retention passed its end. Durable on return, so a reopened log is empty at {@code offset}.
     * Readers holding a slice of a deleted segment fail as after retention. The one way the high
     * watermark moves back.
     *
     * @throws IllegalArgumentException if {@code offset} is negative
     * @throws IllegalStateException if a flush is in flight (it could record a recovery point in a
     *     deleted segment), or the log is closed
     * @throws IOException if writing fails; the log then refuses further writes
     */
    public void restartMirrorAt(long offset) throws IOException {
        ensureWritable();
        if (offset < 0) {
            throw new IllegalArgumentException("cannot restart " + dir + " at negative offset " + offset);
        }
        if (inFlight != null) {
            throw new IllegalStateException("cannot restart " + dir + " while a flush is in flight");
        }
        try {
            // The recovery point names a segment about to be deleted; once that is gone and a new
            // segment below it exists, open would take the point for a lost segment. Without a
            // point, open checks everything as possibly torn, which is right for files going away.
            io.deleteIfExists(dir.resolve(RecoveryPoint.FILE_NAME));
            // The new start is durable before any segment goes (its directory fsync also makes the
            // point's removal durable). After a crash, open cuts whatever old segments survive at
            // it, as after DeleteRecords: the log comes back empty at the offset, or holding old
            // records from it on, which are the upstream's at their own offsets all the same.
            LogStartOffsetFile.write(io, dir, offset);
            startAfreshAt(offset);
            io.crashPoint(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC);
            io.syncDirectory(dir);
            directoryDirty = false;
            writeRecoveryPoint();
        } catch (IOException e) {
            failure = e;
            throw e;
        }
        logStartOffset = offset;
        committedEnd = offset;
        flushedEnd = offset;
        producers.clear();
        aborted.clear();
    }

    /**
     * The state of every producer this partition knows (DescribeProducers): id, epoch, last
     * sequence and timestamp, coordinator epoch of its last marker, start of its ongoing
     * transaction. A copy; call on the log's thread.
     */
    public List<ActiveProducer> activeProducers() {
        return producers.activeProducers();
    }

    /** Writes one batch at the end of the active segment, into preallocated zeros if the config asks. */
    private void appendToActive(MemoryRecords records, long lastOffset, long maxTimestamp, long nowWallMs)
            throws IOException {
        try {
            if (config.preallocateBytes() > 0) {
                active.preallocate(records.sizeInBytes(), config.preallocateBytes(), config.segmentBytes());
            }
            active.append(records, lastOffset, maxTimestamp, nowWallMs, config.indexIntervalBytes());
        } catch (IOException e) {
            failure = e;
            throw e;
        }
    }

    private void maybeRoll(int batchSize, long lastOffset, long nowWallMs) throws IOException {
        if (active.isEmpty()) {
            return; // an oversized batch goes alone into an empty segment
        }
        boolean full = (long) active.size() + batchSize > config.segmentBytes();
        boolean old = nowWallMs - active.firstAppendWallMs() >= config.segmentMs();
        boolean relativeOffsetOverflow = lastOffset - active.baseOffset() > Integer.MAX_VALUE;
        if (full || old || relativeOffsetOverflow) {
            roll();
        }
    }

    /**
     * Starts a new active segment. Nothing is forced here: the old segment's tail, the new file's
     * directory entry and the recovery point all go with the next flush, before anything in the
     * new segment is acknowledged, so a roll costs the owner thread no fsync.
     */
    private void roll() throws IOException {
        long newBase = logEndOffset();
        try {
            active.onBecomeInactive();
            LogSegment seg = LogSegment.create(dir, newBase, io);
            segments.put(newBase, seg);
            active = seg;
            directoryDirty = true;
            io.crashPoint(CrashPoint.MID_SEGMENT_ROLL);
        } catch (IOException e) {
            failure = e;
            throw e;
        }
    }

    /** True when a flush would make more data durable and move the high watermark. */
    public boolean hasUnflushedData() {
        return config.durability() == Durability.DURABLE && flushedEnd < logEndOffset();
    }

    /** True between {@link #beginFlush} and {@link #completeFlush}. */
    public boolean flushInFlight() {
        return inFlight != null;
    }

    /**
     * Group commit on the owner thread: one {@code fdatasync} per dirty segment covering
     * everything appended so far, then the high watermark moves to the log end. Under
     * {@link Durability#NONE} it does nothing. An I/O error propagates and leaves the log refusing
     * writes. The same steps as a flush handed to another thread, run here in a row.
     */
    public void flush() throws IOException {
        LogFlush flush = beginFlush();
        if (flush != null) {
            completeFlush(flush, flush.force());
        }
    }

    /**
     * Owner thread, step 1 of a flush: what has to be forced for everything appended so far to be
     * durable, to hand to {@link LogFlush#force} on any thread. Null when nothing is to be done
     * (under {@link Durability#NONE}, or nothing new since the last flush): what was appended is
     * then as durable as it will be. Only one flush may be in flight.
     *
     * @throws IOException if the log already failed
     * @throws IllegalStateException if a flush is in flight, or the log is closed
     */
    public LogFlush beginFlush() throws IOException {
        ensureWritable();
        if (inFlight != null) {
            throw new IllegalStateException("a flush of " + dir + " is already in flight");
        }
        if (!hasUnflushedData()) {
            return null;
        }
        int dirty = 0;
        for (LogSegment seg : segments.values()) {
            dirty += seg.isDirty() ? 1 : 0;
        }
        LogSegment[] toForce = new LogSegment[dirty];
        int[] sizes = new int[dirty];
        int i = 0;
        for (LogSegment seg : segments.values()) {
            if (seg.isDirty()) {
                toForce[i] = seg;
                sizes[i++] = seg.size();
            }
        }
        // Every segment before the active one is either clean or forced by this flush, so once it
        // has run the whole log up to here is on disk: that is all the point claims.
        RecoveryPoint point = null;
        long nowMs = clock.monoMs();
        if (nowMs - lastRecoveryPointMonoMs >= RECOVERY_POINT_INTERVAL_MS) {
            point = new RecoveryPoint(active.baseOffset(), active.size());
            lastRecoveryPointMonoMs = nowMs;
        }
        inFlight = new LogFlush(dir, io, logEndOffset(), toForce, sizes, directoryDirty, point);
        directoryDirty = false;
        return inFlight;
    }

    /**
     * Owner thread, step 3: {@code flush} came back from {@link LogFlush#force} as {@code forced}.
     * On success the forced sizes, the flushed end and the high watermark move to what it covered;
     * a segment it could not force must have been deleted meanwhile, its bytes gone from the log.
     * After this returns normally, everything below {@link LogFlush#end()} that is still in the
     * log is on disk.
     *
     * @throws IOException if the force failed (the log then refuses writes: never retry an fsync),
     *     if a segment still in the log was not forced, or at a crash test's crash point
     * @throws IllegalStateException if the log was closed meanwhile: nothing is confirmed
     */
    public void completeFlush(LogFlush flush, LogFlush.Forced forced) throws IOException {
        if (flush != inFlight) {
            throw new IllegalStateException("not the flush in flight of " + dir + ": " + flush);
        }
        inFlight = null;
        ensureOpen();
        if (failure != null) {
            throw new IOException("log " + dir + " failed while a flush was in flight", failure);
        }
        if (forced.failure() != null) {
            failure = forced.failure();
            throw failure;
        }
        for (int i = 0; i < flush.segmentCount(); i++) {
            LogSegment seg = flush.segment(i);
            if (segments.get(seg.baseOffset()) != seg) {
                continue; // deleted while its force ran: its bytes left the log
            }
            if (!flush.channelOpen(i)) {
                failure = new IOException(seg.file() + " was closed before it was forced");
                throw failure;
            }
            seg.markForced(flush.size(i));
        }
        flushedEnd = Math.max(flushedEnd, flush.end());
        committedEnd = Math.max(committedEnd, flush.end());
        io.crashPoint(CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE);
    }

    private void forceDirtySegments() throws IOException {
        for (LogSegment seg : segments.values()) {
            if (seg.isDirty()) {
                seg.force();
            }
        }
    }

    /** Records the active segment's current size as fsynced; callers force first. */
    private void writeRecoveryPoint() throws IOException {
        new RecoveryPoint(active.baseOffset(), active.size()).write(io, dir);
        lastRecoveryPointMonoMs = clock.monoMs();
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    public long logEndOffset() {
        return active.nextOffset();
    }

    public long highWatermark() {
        return config.durability() == Durability.NONE ? logEndOffset() : committedEnd;
    }

    /**
     * The last stable offset: below it every transaction has ended, so read_committed consumers
     * may read up to it. The first offset of the earliest transaction still ongoing or whose marker
     * is not below the high watermark yet (not durable, under {@link Durability#DURABLE}), capped
     * by the high watermark (Kafka: min(first unstable offset, high watermark)), so never above
     * data a consumer may not see yet, and never moved by a marker a crash could still lose.
     */
    public long lastStableOffset() {
        long hw = highWatermark();
        long firstUnstable = producers.firstUnstableOffset(hw);
        return firstUnstable < 0 ? hw : Math.min(firstUnstable, hw);
    }

    /**
     * The aborted transactions a read_committed fetch of {@code [fetchOffset, upperBoundOffset)}
     * must be told about: those whose ABORT marker is at or after {@code fetchOffset} and which
     * began before {@code upperBoundOffset}, in marker order.
     */
    public List<AbortedTransaction> abortedTransactions(long fetchOffset, long upperBoundOffset) {
        ensureOpen();
        return aborted.overlapping(fetchOffset, upperBoundOffset);
    }

    /**
     * The bound for deleting segments: none holding offsets at or above the high watermark, nor
     * the first offset of an ongoing transaction. Keeping that segment means a reopened log finds
     * the transaction's first batch again, so its state needs no file of its own.
     */
    private long segmentDeletionBound() {
        return lastStableOffset();
    }

    /**
     * Whole batches holding offsets in {@code [fetchOffset, highWatermark)}, copied to the heap.
     * Stops before exceeding {@code maxBytes}, except that with {@code minOneBatch} the first batch
     * is returned whatever its size.
     *
     * @throws OffsetOutOfRangeException if {@code fetchOffset} is below the log start offset or
     *     above the high watermark
     */
    public LogReadResult<MemoryRecords> read(long fetchOffset, int maxBytes, boolean minOneBatch) throws IOException {
        long hw = checkFetchOffset(fetchOffset);
        MemoryRecords records = fetchOffset == hw ? MemoryRecords.EMPTY
                : reader.read(fetchOffset, hw, maxBytes, minOneBatch);
        return new LogReadResult<>(records, highWatermark(), logStartOffset, logEndOffset(), lastStableOffset(),
                List.of());
    }

    /**
     * The same batches as {@link #read}, left on the segment files: for a caller that only sends
     * them on (a plain Fetch), not one that parses them. The result shares the segments'
     * channels, so it fails to write once a segment it spans is deleted; see {@link SegmentRecords}.
     *
     * @throws OffsetOutOfRangeException as for {@link #read}
     */
    public LogReadResult<SegmentRecords> readInPlace(long fetchOffset, int maxBytes, boolean minOneBatch)
            throws IOException {
        return readInPlace(fetchOffset, maxBytes, minOneBatch, IsolationLevel.READ_UNCOMMITTED);
    }

    /**
     * As {@link #readInPlace(long, int, boolean)}, for a consumer with {@code isolation}. Under
     * READ_COMMITTED only batches below the last stable offset are returned, with the aborted
     * transactions that overlap them; control batches are returned either way (clients skip them,
     * and the markers tell a read_committed consumer where an aborted transaction ends).
     *
     * @throws OffsetOutOfRangeException as for {@link #read}: the fetch offset may lie between the
     *     last stable offset and the high watermark, and then nothing is returned
     */
    public LogReadResult<SegmentRecords> readInPlace(long fetchOffset, int maxBytes, boolean minOneBatch,
            IsolationLevel isolation) throws IOException {
        long hw = checkFetchOffset(fetchOffset);
        long lso = lastStableOffset();
        boolean committed = isolation == IsolationLevel.READ_COMMITTED;
        long limit = committed ? lso : hw;
        if (fetchOffset >= limit) {
            return new LogReadResult<>(SegmentRecords.EMPTY, hw, logStartOffset, logEndOffset(), lso, List.of());
        }
        LogReader.InPlace read = reader.readInPlaceTo(fetchOffset, limit, maxBytes, minOneBatch);
        List<AbortedTransaction> overlapping = committed && read.records().sizeInBytes() > 0
                ? aborted.overlapping(fetchOffset, read.endOffset()) : List.of();
        return new LogReadResult<>(read.records(), hw, logStartOffset, logEndOffset(), lso, overlapping);
    }

    /**
     * The bounds and places of the same batches as {@link #readInPlace}, for a caller that picks
     * which of them to send by offset (a share fetch) and sends those from the files, reading only
     * the batch headers here. The result is for this log's thread; the {@link SegmentRecords} it
     * gives may cross threads, and fail to write once a segment they span is deleted.
     *
     * @throws OffsetOutOfRangeException as for {@link #read}
     */
    public SegmentBatches readBatchesInPlace(long fetchOffset, int maxBytes, boolean minOneBatch) {
        long hw = checkFetchOffset(fetchOffset);
        return fetchOffset == hw ? SegmentBatches.EMPTY
                : reader.readBatchesInPlace(fetchOffset, hw, maxBytes, minOneBatch);
    }

    /** The high watermark, once {@code fetchOffset} is known to be readable. */
    private long checkFetchOffset(long fetchOffset) {
        ensureOpen();
        long hw = highWatermark();
        if (fetchOffset < logStartOffset || fetchOffset > hw) {
            throw new OffsetOutOfRangeException("fetch offset " + fetchOffset + " is outside [" + logStartOffset + ", "
                    + hw + "] of " + dir);
        }
        return hw;
    }

    /**
     * The first offset in {@code [logStartOffset, highWatermark)} whose record has a timestamp
     * {@code >= timestampMs}, with that timestamp; null if there is none. Segments whose newest
     * record is older are skipped, the time index skips inside a segment, and the remaining
     * batches are scanned.
     */
    public OffsetAndTimestamp offsetForTimestamp(long timestampMs) throws IOException {
        ensureOpen();
        return reader.offsetForTimestamp(timestampMs, logStartOffset, highWatermark());
    }

    /**
     * The record with the largest timestamp in {@code [logStartOffset, highWatermark)} (the first
     * one if several share it), or null if that range is empty. Whole segments use the maximum
     * kept in memory; only the edge segments are scanned.
     */
    public OffsetAndTimestamp maxTimestamp() throws IOException {
        ensureOpen();
        long hw = highWatermark();
        if (logStartOffset >= hw) {
            return null;
        }
        return reader.maxTimestamp(logStartOffset, hw);
    }

    /**
     * DeleteRecords: moves the log start offset up to {@code offset} (persisted before anything is
     * deleted) and deletes the segments wholly below it. Returns the new log start offset.
     *
     * @throws OffsetOutOfRangeException if {@code offset} is above the high watermark
     */
    public long deleteRecordsBefore(long offset) throws IOException {
        ensureOpen();
        long hw = highWatermark();
        if (offset > hw) {
            throw new OffsetOutOfRangeException("cannot delete records before " + offset + ": above the high watermark "
                    + hw + " of " + dir);
        }
        if (offset <= logStartOffset) {
            return logStartOffset;
        }
        LogStartOffsetFile.write(io, dir, offset);
        logStartOffset = offset;
        boolean deleted = retention.deleteBelow(offset, segmentDeletionBound());
        producers.retainFrom(logStartOffset);
        aborted.retainFrom(logStartOffset);
        if (deleted) {
            io.crashPoint(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC);
            io.syncDirectory(dir); // a deleted segment must not come back after power loss
        }
        return logStartOffset;
    }

    /**
     * Rolls the active segment once it is older than segment.ms, then deletes the oldest closed
     * segments past retention.ms (by their newest timestamp, against {@code clock.wallMs()}) and
     * beyond retention.bytes. The active segment and data above the high watermark are never
     * deleted. Returns true if any segment was deleted.
     */
    public boolean enforceRetention() throws IOException {
        ensureOpen();
        long now = clock.wallMs();
        if (!active.isEmpty() && now - active.firstAppendWallMs() >= config.segmentMs()) {
            ensureWritable();
            roll();
        }
        long bound = segmentDeletionBound();
        // retention.ms and retention.bytes apply only where the cleanup policy has "delete".
        boolean deletes = config.cleanupPolicy().delete();
        boolean deleted = deletes && config.retentionMs() >= 0
                && retention.deleteOlderThan(config.retentionMs(), now, bound);
        if (deletes && config.retentionBytes() >= 0) {
            deleted |= retention.deleteBeyondBytes(sizeInBytes() - config.retentionBytes(), bound);
        }
        if (deleted) {
            logStartOffset = Math.max(logStartOffset, segments.firstKey());
            producers.retainFrom(logStartOffset);
            aborted.retainFrom(logStartOffset);
            io.crashPoint(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC);
            io.syncDirectory(dir); // one fsync makes every deletion of this pass durable
        }
        return deleted;
    }

    /** Replaces the settings; takes effect from the next append or retention pass. */
    public void updateConfig(LogConfig newConfig) {
        if (config.durability() == Durability.NONE && newConfig.durability() == Durability.DURABLE) {
            // Everything up to here was already visible as committed; keep the high watermark from
            // moving back. Later appends wait for a flush.
            committedEnd = logEndOffset();
        }
        config = newConfig;
    }

    public LogConfig config() {
        return config;
    }

    /** Total bytes of all segment files. */
    public long sizeInBytes() {
        long total = 0;
        for (LogSegment seg : segments.values()) {
            total += seg.size();
        }
        return total;
    }

    /** Number of segments, the active one included. */
    public int segmentCount() {
        return segments.size();
    }

    /** The partition directory. */
    public Path dir() {
        return dir;
    }

    /**
     * Forces unflushed data, records the recovery point and closes the files. Idempotent.
     *
     * @throws UncheckedIOException if forcing or closing fails
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        IOException error = null;
        if (failure == null) {
            try {
                active.trimFile(); // before the force, so the file's end is durable with its data
                forceDirtySegments();
                if (inFlight == null) { // else the flush in flight may be writing it
                    writeRecoveryPoint();
                }
            } catch (IOException e) {
                error = e;
            }
        }
        error = LogSegment.closeAll(segments.values(), error);
        if (error != null) {
            throw new UncheckedIOException("failed to close log " + dir, error);
        }
    }

    /**
     * Closes the files without forcing them or moving the recovery point, as if the process had
     * died. For crash-recovery tests.
     */
    void closeAbruptly() {
        closed = true;
        IOException e = LogSegment.closeAll(segments.values(), null);
        if (e != null) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Closes the log without flushing and removes its directory. Not while a flush is in flight:
     * it may still write in the directory.
     */
    public void deleteFiles() throws IOException {
        if (inFlight != null) {
            throw new IllegalStateException("a flush of " + dir + " is in flight");
        }
        if (!closed) {
            closed = true;
            IOException error = LogSegment.closeAll(segments.values(), null);
            if (error != null) {
                throw error;
            }
        }
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    io.deleteIfExists(p);
                }
            }
            io.syncDirectory(dir.getParent());
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("log " + dir + " is closed");
        }
    }

    private void ensureWritable() throws IOException {
        ensureOpen();
        if (failure != null) {
            throw new IOException("log " + dir + " refuses writes after an earlier I/O error", failure);
        }
    }

    @Override
    public String toString() {
        return "PartitionLog(" + dir + ", start=" + logStartOffset + ", hw=" + highWatermark() + ", end="
                + logEndOffset() + ", segments=" + segments.size() + ")";
    }

}
