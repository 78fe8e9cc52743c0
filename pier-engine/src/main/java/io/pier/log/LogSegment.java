package io.pier.log;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.PierFileRecords;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * One segment of a partition log: the {@code .log} file of record batches plus its sparse offset
 * and time indexes, and a few figures kept in memory (next offset, largest timestamp, time of
 * first append). Owned by the log's thread.
 *
 * <p>Invariants: batch offsets increase from {@link #baseOffset()} on, without gaps except in a
 * mirrored log, which keeps its upstream's (a lookup in a gap finds the next batch); the file
 * holds only whole, valid batches (recovery cuts anything else off before a segment is used);
 * every offset in the segment is below {@code baseOffset + 2^31} so relative offsets fit an int.
 *
 * <p><b>Preallocation.</b> A log whose config asks for it keeps the active file longer than its
 * data, filled with real zeros ({@link #preallocate}): an fdatasync after writing into bytes the
 * file already has needs no ext4 journal commit (no size or block change), which is most of a
 * small state record's fsync. A sparse {@code setLength} or {@code fallocate} would not do: the
 * first write into a hole or an unwritten extent changes block metadata all the same. The zeros
 * go when the segment stops being active or its log is closed ({@link #trimFile}); after a crash,
 * recovery treats a tail of zeros as the end of the data ({@link LogRecovery}).
 */
final class LogSegment {
    /** Zeros written into a preallocated region, 64 KiB per write. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    static final String LOG_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";
    static final String TIME_INDEX_SUFFIX = ".timeindex";

    private final long baseOffset;
    private final FileIO io;
    private final FileRecords records;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private long nextOffset;
    private int bytesSinceLastIndexEntry;
    private long maxTimestamp = RecordBatch.NO_TIMESTAMP;
    private int maxTimestampPosition = -1; // first batch carrying maxTimestamp; -1 while empty
    private long firstAppendWallMs = -1;
    /**
     * Bytes from the start known to be on disk: a force that began after they were written has
     * returned. Moved only by the owner thread, when it learns of such a force (which may have run
     * on another thread, see {@link LogFlush}).
     */
    private int forcedSize;
    /** The file's length as this segment made it: {@link #size()} plus any preallocated zeros. */
    private long fileLength;

    private LogSegment(long baseOffset, FileRecords records, boolean rebuilding, Path dir, FileIO io)
            throws IOException {
        this.baseOffset = baseOffset;
        this.io = io;
        this.records = records;
        this.fileLength = records.channel().size();
        this.nextOffset = baseOffset;
        this.offsetIndex = new OffsetIndex(baseOffset, new IndexFile(io, dir.resolve(fileName(baseOffset, INDEX_SUFFIX))),
                !rebuilding);
        this.timeIndex = new TimeIndex(baseOffset, new IndexFile(io,
                dir.resolve(fileName(baseOffset, TIME_INDEX_SUFFIX))),
                !rebuilding);
    }

    /**
     * Kafka's naming: the base offset as 20 zero-padded digits plus the suffix. Padded by hand:
     * {@code String.format} would load its formatter and locale data, milliseconds of every cold
     * start, for the first segment a broker opens.
     */
    static String fileName(long baseOffset, String suffix) {
        String digits = Long.toString(baseOffset);
        return "0".repeat(Math.max(0, 20 - digits.length())) + digits + suffix;
    }

    /** Creates an empty segment with empty index files. */
    static LogSegment create(Path dir, long baseOffset, FileIO io) throws IOException {
        Path log = dir.resolve(fileName(baseOffset, LOG_SUFFIX));
        if (Files.exists(log)) {
            throw new IOException("segment already exists: " + log);
        }
        LogSegment s = new LogSegment(baseOffset, PierFileRecords.open(log.toFile(), io.open(log, true)), true, dir,
                io);
        s.offsetIndex.persist();
        s.timeIndex.persist();
        return s;
    }

    /**
     * Opens an existing segment for recovery. Its indexes start empty; the caller replays every
     * batch through {@link #onBatch} and then calls {@link #finishRecovery()}.
     */
    static LogSegment openForRecovery(Path dir, long baseOffset, FileIO io) throws IOException {
        Path log = dir.resolve(fileName(baseOffset, LOG_SUFFIX));
        return new LogSegment(baseOffset, PierFileRecords.open(log.toFile(), io.open(log, false)), true, dir, io);
    }

    long baseOffset() {
        return baseOffset;
    }

    long nextOffset() {
        return nextOffset;
    }

    int size() {
        return records.sizeInBytes();
    }

    boolean isEmpty() {
        return size() == 0;
    }

    long maxTimestamp() {
        return maxTimestamp;
    }

    int maxTimestampPosition() {
        return maxTimestampPosition;
    }

    long firstAppendWallMs() {
        return firstAppendWallMs;
    }

    void setFirstAppendWallMs(long wallMs) {
        firstAppendWallMs = wallMs;
    }

    Path file() {
        return records.file().toPath();
    }

    /**
     * Makes the file at least {@code bytes} longer than the data by writing zeros after its end,
     * {@code chunk} bytes at a time but not past {@code limit} (unless the next batch alone needs
     * it), so that the next appends overwrite bytes the file already has. Unforced: the zeros and
     * the new length go to disk with the next flush, one journal commit per chunk.
     */
    void preallocate(int bytes, int chunk, long limit) throws IOException {
        long needed = (long) size() + bytes;
        if (needed <= fileLength) {
            return;
        }
        long target = Math.max(needed, Math.min(fileLength + chunk, limit));
        FileChannel ch = records.channel();
        long at = fileLength;
        while (at < target) {
            ByteBuffer zeros = ZEROS.duplicate();
            zeros.limit((int) Math.min(zeros.capacity(), target - at));
            at += ch.write(zeros, at);
        }
        fileLength = target;
    }

    /** Cuts preallocated zeros off the file, so that it ends where its data does. */
    void trimFile() throws IOException {
        if (fileLength > size()) {
            records.trim();
            fileLength = size();
        }
    }

    /**
     * Appends one batch whose offsets are already assigned. {@code records} holds exactly that
     * batch.
     */
    void append(MemoryRecords batchRecords, long lastOffset, long batchMaxTimestamp, long nowWallMs,
            int indexIntervalBytes) throws IOException {
        int position = size();
        records.append(batchRecords);
        if (firstAppendWallMs < 0) {
            firstAppendWallMs = nowWallMs;
        }
        onBatch(position, batchRecords.sizeInBytes(), lastOffset, batchMaxTimestamp, indexIntervalBytes);
    }

    /** Updates indexes and in-memory figures for a batch now present at {@code position}. */
    void onBatch(int position, int batchSize, long lastOffset, long batchMaxTimestamp, int indexIntervalBytes)
            throws IOException {
        if (maxTimestampPosition < 0 || batchMaxTimestamp > maxTimestamp) {
            maxTimestamp = batchMaxTimestamp;
            maxTimestampPosition = position;
        }
        // Same rule as Kafka: index a batch once more than an interval's worth of bytes precede it
        // since the previous entry, so the first batch (position 0) never needs an entry.
        if (bytesSinceLastIndexEntry > indexIntervalBytes) {
            offsetIndex.append(lastOffset, position);
            timeIndex.maybeAppend(maxTimestamp, lastOffset);
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += batchSize;
        nextOffset = lastOffset + 1;
    }

    void finishRecovery() throws IOException {
        offsetIndex.persist();
        timeIndex.persist();
    }

    /**
     * Called when a newer segment takes over appends: cuts preallocated zeros, seals the time
     * index and frees the index files' descriptors.
     */
    void onBecomeInactive() throws IOException {
        trimFile();
        if (maxTimestampPosition >= 0) {
            timeIndex.maybeAppend(maxTimestamp, nextOffset - 1);
        }
        offsetIndex.closeFile();
        timeIndex.closeFile();
    }

    /** True when bytes were written that no completed force is known to cover. */
    boolean isDirty() {
        return size() > forcedSize;
    }

    /** Bytes known to be on disk; see {@link #markForced}. */
    int forcedSize() {
        return forcedSize;
    }

    /** A force of {@link #channel()} that began once the first {@code size} bytes were written has returned. */
    void markForced(int size) {
        forcedSize = Math.max(forcedSize, size);
    }

    /**
     * The log file's channel, for a force on another thread ({@link LogFlush}): a {@link FileChannel}
     * may be forced while its owner appends to it.
     */
    FileChannel channel() {
        return records.channel();
    }

    /** fdatasync of the log file, on the owner thread: the data, and the size metadata needed to read it back. */
    void force() throws IOException {
        int size = size();
        records.channel().force(false);
        markForced(size);
    }

    /**
     * Cuts the file at {@code position}, which must be a batch boundary. Only recovery does, and it
     * forces every segment before the log is used.
     */
    void truncateTo(int position) throws IOException {
        records.truncateTo(position);
        fileLength = Math.min(fileLength, position);
        forcedSize = Math.min(forcedSize, position);
    }

    /** Batches starting at {@code position}, headers read lazily. */
    Iterable<FileChannelRecordBatch> batchesFrom(int position) {
        return records.batchesFrom(position);
    }

    /** The position of the first batch whose last offset is {@code >= offset}, or -1 if none. */
    int positionOfBatchContaining(long offset) {
        for (FileChannelRecordBatch b : records.batchesFrom(offsetIndex.lookup(offset))) {
            if (b.lastOffset() >= offset) {
                return b.position();
            }
        }
        return -1;
    }

    /** First offset that may hold a record with timestamp {@code >= timestampMs}, per the time index. */
    long firstCandidateOffset(long timestampMs) {
        return timeIndex.firstCandidateOffset(timestampMs);
    }

    /**
     * A view of {@code size} bytes from {@code position} that shares this segment's channel: it
     * stops working when the segment is closed.
     */
    FileRecords slice(int position, int size) throws IOException {
        return records.slice(position, size);
    }

    /** Copies {@code length} bytes starting at {@code position} into {@code dst}. */
    void readInto(ByteBuffer dst, int position, int length) throws IOException {
        FileChannel ch = records.channel();
        int end = dst.position() + length;
        ByteBuffer view = dst.duplicate().limit(end);
        long filePos = position;
        while (view.hasRemaining()) {
            int n = ch.read(view, filePos);
            if (n < 0) {
                throw new EOFException("unexpected end of " + file() + " at " + filePos);
            }
            filePos += n;
        }
        dst.position(end);
    }

    /** True when every byte of the file from {@code position} to its end is zero. */
    boolean onlyZerosFrom(int position) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        long at = position;
        long end = records.channel().size();
        while (at < end) {
            buf.clear().limit((int) Math.min(buf.capacity(), end - at));
            readInto(buf, (int) at, buf.limit());
            for (int i = 0; i < buf.limit(); i++) {
                if (buf.get(i) != 0) {
                    return false;
                }
            }
            at += buf.limit();
        }
        return true;
    }

    int offsetIndexEntries() {
        return offsetIndex.entries();
    }

    int timeIndexEntries() {
        return timeIndex.entries();
    }

    /** Closes the files; preallocated zeros stay unless {@link #trimFile} ran first. */
    void close() throws IOException {
        try {
            offsetIndex.closeFile();
            timeIndex.closeFile();
        } finally {
            records.close();
        }
    }

    /**
     * Closes every segment, trying all of them. Returns {@code error}, or if that is null the first
     * failure, with any later failures suppressed in it; null if nothing failed.
     */
    static IOException closeAll(Iterable<LogSegment> segments, IOException error) {
        for (LogSegment seg : segments) {
            try {
                seg.close();
            } catch (IOException e) {
                if (error == null) {
                    error = e;
                } else {
                    error.addSuppressed(e);
                }
            }
        }
        return error;
    }

    /** Closes every segment after {@code cause} made them useless; close failures are suppressed in it. */
    static void closeAllAfter(Iterable<LogSegment> segments, Exception cause) {
        IOException e = closeAll(segments, null);
        if (e != null) {
            cause.addSuppressed(e);
        }
    }

    /**
     * Closes and removes the log and index files. The file is not forced first (as a plain close
     * would, see {@link FileRecords#close()}): it is going away, and what makes that durable is the
     * directory fsync after it. A force of this file running on a flusher thread fails with a
     * closed channel, which the flush treats as "left the log", not as an fsync failure.
     */
    void closeAndDelete() throws IOException {
        try {
            offsetIndex.closeFile();
            timeIndex.closeFile();
        } finally {
            records.channel().close();
        }
        offsetIndex.deleteFile();
        timeIndex.deleteFile();
        io.deleteIfExists(file());
    }
}
