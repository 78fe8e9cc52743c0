package io.pier.service;

import io.pier.log.PartitionLog;
import io.pier.share.RecordKeys;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * The keys of a stretch of a partition log as the share engine's 64-bit hashes ({@link
 * RecordKeys}), for share groups that order by key. Only those read their records' keys: an
 * unordered acquisition never parses a record.
 *
 * <p>A stretch grows at its end and forgets at its start, so the keys of the records just past a
 * share-partition's in-flight window, read by one acquisition and not taken into the window (no
 * room, or blocked behind their keys), are still known to the next: each record is read and
 * parsed once rather than once per fetch that reaches it. Offsets keep their records for good
 * (a log only loses records at its start), so what was parsed stays true.
 */
final class RecordKeyHashes implements RecordKeys {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    /** The offset of {@code hashes[0]}. */
    private long base;
    private long[] hashes;
    /** The offset after the last record parsed (exclusive): keys are known from base up to here. */
    private long end;

    private RecordKeyHashes(long from) {
        this.base = from;
        this.end = from;
        this.hashes = new long[64];
    }

    /** An empty stretch that starts at {@code from}. */
    static RecordKeyHashes startingAt(long from) {
        return new RecordKeyHashes(from);
    }

    /** The keys of the records from {@code from} to at least {@code upTo} (exclusive), read in pieces of {@code readBytes}. */
    static RecordKeyHashes read(PartitionLog log, long from, long upTo, int readBytes) throws IOException {
        RecordKeyHashes keys = new RecordKeyHashes(from);
        keys.readUpTo(log, upTo, readBytes);
        return keys;
    }

    /**
     * Reads and parses whole batches from {@link #knownEnd} on until it reaches {@code upTo} or
     * the log has nothing more.
     */
    void readUpTo(PartitionLog log, long upTo, int readBytes) throws IOException {
        if (end < log.logStartOffset()) {
            // Records below the log start are gone: no key (they are archived when a fetch reaches them).
            forgetBelow(log.logStartOffset());
            end = Math.max(end, log.logStartOffset());
        }
        while (end < upTo) {
            MemoryRecords read = log.read(end, readBytes, true).records();
            if (read.sizeInBytes() == 0) {
                break;
            }
            long before = end;
            add(read);
            if (end == before) {
                break;
            }
        }
    }

    /** The first offset whose key is known (if any is). */
    long startOffset() {
        return base;
    }

    /** Drops the keys below {@code offset}, which no acquisition asks for again. */
    void forgetBelow(long offset) {
        if (offset <= base) {
            return;
        }
        int drop = (int) Math.min(end - base, offset - base);
        System.arraycopy(hashes, drop, hashes, 0, (int) (end - base) - drop);
        base = offset;
        end = Math.max(end, offset);
    }

    /** Adds the keys of the records of the whole batches of {@code read} that start at or past {@link #knownEnd}. */
    private void add(MemoryRecords read) {
        for (RecordBatch batch : read.batches()) {
            if (batch.nextOffset() <= end) {
                continue;
            }
            if (!batch.isControlBatch()) {
                for (Record r : batch) {
                    if (r.offset() >= end) {
                        extendTo(r.offset());
                        hashes[(int) (r.offset() - base)] = hash(r.key());
                        end = r.offset() + 1;
                    }
                }
            }
            extendTo(batch.nextOffset());
        }
    }

    /** Known up to {@code offset} (exclusive): offsets a compacted log lacks, and control records, have no key. */
    private void extendTo(long offset) {
        int to = (int) (offset - base);
        if (to >= hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(to + 1, hashes.length * 2));
        }
        Arrays.fill(hashes, (int) (end - base), to, NO_KEY);
        end = Math.max(end, offset);
    }

    @Override
    public long keyOf(long offset) {
        return offset >= base && offset < end ? hashes[(int) (offset - base)] : NO_KEY;
    }

    @Override
    public long knownEnd() {
        return end;
    }

    /**
     * FNV-1a over the key's bytes; a null key is {@link #NO_KEY}, and a key hashing to it counts as
     * key 1 (ordered with that key: stricter, never looser).
     */
    static long hash(ByteBuffer key) {
        if (key == null) {
            return NO_KEY;
        }
        long h = FNV_OFFSET;
        for (int i = key.position(); i < key.limit(); i++) {
            h ^= key.get(i) & 0xff;
            h *= FNV_PRIME;
        }
        return h == NO_KEY ? 1 : h;
    }
}
