package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What the offset and time indexes of a segment have in common: fixed-size entries whose keys
 * strictly increase, held in memory (the authoritative copy, rebuilt from the log on open) and
 * mirrored to an {@link IndexFile}. Each subclass keeps its two columns in arrays of their own
 * width and says how an entry is encoded; this class does the counting, the mirroring, the
 * rebuild's single write and the binary search. Owned by the log's thread.
 */
abstract sealed class SparseIndex permits OffsetIndex, TimeIndex {
    static final int INITIAL_CAPACITY = 16;

    final long baseOffset;
    private final IndexFile file;
    private final int entrySize;
    private int entries;
    private boolean mirror; // false while rebuilding: the file is written once at the end instead

    SparseIndex(long baseOffset, IndexFile file, int entrySize, boolean mirror) {
        this.baseOffset = baseOffset;
        this.file = file;
        this.entrySize = entrySize;
        this.mirror = mirror;
    }

    /** The key of entry {@code i}. */
    abstract long keyAt(int i);

    /** Stores entry {@code i}, growing the columns when {@code i} reaches their length. */
    abstract void store(int i, long key, int value);

    /** Writes entry {@code i} in its on-disk form. */
    abstract void encode(int i, ByteBuffer dst);

    /** Adds an entry after the last one; the caller has checked that its key is larger. */
    final void add(long key, int value) throws IOException {
        store(entries, key, value);
        entries++;
        if (mirror) {
            ByteBuffer buf = ByteBuffer.allocate(entrySize);
            encode(entries - 1, buf);
            file.append(buf.flip());
        }
    }

    /**
     * The index of the last entry whose key is below {@code bound} (or equal to it, when
     * {@code inclusive}), or -1 if there is none.
     */
    final int lastEntryBelow(long bound, boolean inclusive) {
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long key = keyAt(mid);
            if (key < bound || (inclusive && key == bound)) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** {@code offset} relative to the segment base. */
    final int relative(long offset) {
        return Math.toIntExact(offset - baseOffset);
    }

    final int entries() {
        return entries;
    }

    /** Ends a rebuild: writes all entries to the file at once and mirrors later appends. */
    final void persist() throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(entries * entrySize);
        for (int i = 0; i < entries; i++) {
            encode(i, buf);
        }
        file.replaceWith(buf.flip());
        mirror = true;
    }

    final void closeFile() throws IOException {
        file.close();
    }

    final void deleteFile() throws IOException {
        file.delete();
    }
}
