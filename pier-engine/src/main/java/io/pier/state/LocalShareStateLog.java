package io.pier.state;

import io.pier.common.Clock;
import io.pier.log.CleanupPolicy;
import io.pier.log.CrashPoint;
import io.pier.log.Durability;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.LogReadResult;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * The share-state records on a local folder ({@code <data>/share-state/}), as uncompressed Kafka
 * v2 record batches in a {@link PartitionLog} opened in {@link Durability#DURABLE} mode: every
 * batch is CRC-checked on open, {@link #flush} is one fdatasync (into a preallocated file, so
 * without a journal commit), and a torn tail after the last
 * recovery point is cut while damage before it refuses the open, naming the segment file and
 * position. Segment layout and recovery are the partition log's; the record layout is
 * {@link ShareStateRecords}' (see {@code docs/share-state-format.md}).
 *
 * <pre>
 *   append(entries) --&gt; record batches of at most 512 KiB, timestamped with the wall clock
 *                       (MID_SNAPSHOT crash point between two batches once a snapshot went out)
 *   moveStart(o)    --&gt; PartitionLog.deleteRecordsBefore(o): start offset file, then whole
 *                       segments below o are deleted
 * </pre>
 *
 * <p>Owned by one thread at a time (see {@link ShareStateLog}).
 */
public final class LocalShareStateLog implements ShareStateLog {
    /** Records of one batch stay below this, well under the log's max.message.bytes. */
    private static final int MAX_BATCH_BYTES = 512 * 1024;
    private static final int MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
    private static final int INDEX_INTERVAL_BYTES = 4096;
    /**
     * Zeros kept ahead of the data (see LogSegment): a state record's fdatasync then writes data
     * and a cache flush but no journal commit, except once per this many bytes.
     */
    private static final int PREALLOCATE_BYTES = 1024 * 1024;
    private static final int READ_BYTES = 1024 * 1024;
    /** Per-record overhead counted towards {@link #MAX_BATCH_BYTES}, roughly the v2 record header. */
    private static final int RECORD_OVERHEAD_BYTES = 16;

    private final PartitionLog log;
    private final Clock clock;
    private final FileIO io;

    private LocalShareStateLog(PartitionLog log, Clock clock, FileIO io) {
        this.log = log;
        this.clock = clock;
        this.io = io;
    }

    /**
     * Opens (creating if needed) the state log in {@code dir}, recovering its tail.
     *
     * @param segmentBytes segment size; whole segments below the start are deleted
     * @param clock wall time for record timestamps (the log's own recovery bookkeeping reads it too)
     * @throws IOException if the log cannot be read or is damaged inside its synced region
     */
    public static LocalShareStateLog open(Path dir, long segmentBytes, Clock clock, FileIO io) throws IOException {
        LogConfig config = new LogConfig(segmentBytes, Long.MAX_VALUE, -1, -1, MAX_MESSAGE_BYTES,
                INDEX_INTERVAL_BYTES, false, Durability.DURABLE, CleanupPolicy.DELETE, PREALLOCATE_BYTES);
        return new LocalShareStateLog(PartitionLog.open(dir, config, clock, io), clock, io);
    }

    @Override
    public long append(List<Entry> entries) throws IOException {
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("nothing to append");
        }
        long timestampMs = clock.wallMs();
        long first = -1;
        boolean snapshotWritten = false;
        int from = 0;
        while (from < entries.size()) {
            if (snapshotWritten) {
                io.crashPoint(CrashPoint.MID_SNAPSHOT);
            }
            int to = batchEnd(entries, from);
            SimpleRecord[] batch = new SimpleRecord[to - from];
            for (int i = from; i < to; i++) {
                Entry e = entries.get(i);
                batch[i - from] = new SimpleRecord(timestampMs, e.key(), e.value());
                snapshotWritten |= isFullRecord(e);
            }
            long base = log.append(MemoryRecords.withRecords(Compression.NONE, batch)).baseOffset();
            first = first < 0 ? base : first;
            from = to;
        }
        return first;
    }

    /** The exclusive end of the batch that starts at {@code from}: at least one record. */
    private static int batchEnd(List<Entry> entries, int from) {
        int size = 0;
        int to = from;
        while (to < entries.size() && (to == from || size < MAX_BATCH_BYTES)) {
            Entry e = entries.get(to++);
            size += e.key().length + (e.value() == null ? 0 : e.value().length) + RECORD_OVERHEAD_BYTES;
        }
        return to;
    }

    /** A snapshot or a group record: a key written whole (a tombstone or an update is not). */
    private static boolean isFullRecord(Entry e) {
        return e.value() != null && ByteBuffer.wrap(e.key()).getShort(0) != ShareStateRecords.UPDATE;
    }

    @Override
    public void flush() throws IOException {
        log.flush();
    }

    @Override
    public void replay(Visitor visitor) throws IOException {
        long offset = log.logStartOffset();
        long end = log.highWatermark();
        while (offset < end) {
            LogReadResult<MemoryRecords> read = log.read(offset, READ_BYTES, true);
            long before = offset;
            for (RecordBatch batch : read.records().batches()) {
                for (Record r : batch) {
                    if (r.offset() >= offset) {
                        visitor.onRecord(r.offset(), r.key(), r.hasValue() ? r.value() : null);
                    }
                }
                offset = batch.lastOffset() + 1;
            }
            if (offset == before) {
                throw new IOException("share-state log " + log.dir() + " made no progress at offset " + offset);
            }
        }
    }

    @Override
    public long startOffset() {
        return log.logStartOffset();
    }

    @Override
    public long endOffset() {
        return log.logEndOffset();
    }

    @Override
    public boolean reclaimable() {
        return log.segmentCount() > 1;
    }

    @Override
    public void moveStart(long offset) throws IOException {
        if (offset > log.highWatermark()) {
            throw new IllegalArgumentException("cannot move the start of " + log.dir() + " to " + offset
                    + ", beyond its durable end " + log.highWatermark());
        }
        log.deleteRecordsBefore(offset);
    }

    @Override
    public String name() {
        return log.dir().toString();
    }

    /** The number of segment files; for tests that check that a start move freed space. */
    int segmentCount() {
        return log.segmentCount();
    }

    @Override
    public void close() {
        log.close();
    }
}
