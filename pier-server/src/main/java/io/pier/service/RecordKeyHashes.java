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
 */
final class RecordKeyHashes implements RecordKeys {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private final long base;
    private long[] hashes;
    private int count;

    private RecordKeyHashes(long base) {
        this.base = base;
        this.hashes = new long[64];
    }

    /** The keys of the records from {@code from} to {@code upTo} (exclusive), read in pieces of {@code readBytes}. */
    static RecordKeyHashes read(PartitionLog log, long from, long upTo, int readBytes) throws IOException {
        RecordKeyHashes keys = new RecordKeyHashes(from);
        // Records below the log start are gone: no key (they are archived when a fetch reaches them).
        long position = Math.max(from, log.logStartOffset());
        while (position < upTo) {
            MemoryRecords read = log.read(position, readBytes, true).records();
            if (read.sizeInBytes() == 0) {
                break;
            }
            position = keys.add(read, upTo);
        }
        return keys;
    }

    /** The keys of the records of one read from {@code from} on (what an acquisition read). */
    static RecordKeyHashes of(MemoryRecords read, long from) {
        RecordKeyHashes keys = new RecordKeyHashes(from);
        keys.add(read, Long.MAX_VALUE);
        return keys;
    }

    /** Adds the keys of the records of {@code read} below {@code upTo}; returns the offset after them. */
    private long add(MemoryRecords read, long upTo) {
        long next = base + count;
        for (RecordBatch batch : read.batches()) {
            if (batch.baseOffset() >= upTo) {
                break;
            }
            if (!batch.isControlBatch()) {
                for (Record r : batch) {
                    if (r.offset() >= base && r.offset() < upTo) {
                        put(r.offset(), hash(r.key()));
                    }
                }
            }
            next = batch.nextOffset();
        }
        return next;
    }

    private void put(long offset, long hash) {
        int i = (int) (offset - base);
        if (i >= hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(i + 1, hashes.length * 2));
        }
        hashes[i] = hash;
        count = Math.max(count, i + 1);
    }

    @Override
    public long keyOf(long offset) {
        long i = offset - base;
        return i >= 0 && i < count ? hashes[(int) i] : NO_KEY;
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
