package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Sparse offset index of one segment: entries (offset relative to the segment base, file
 * position of a batch whose last offset is that offset), in increasing order of both. A lookup
 * returns a position from which a forward scan of batch headers finds the wanted offset.
 *
 * <p>Entries live in memory (the authoritative copy, rebuilt from the log on open) and are mirrored
 * to the {@code .index} file as 8-byte big-endian pairs. Owned by the log's thread.
 */
final class OffsetIndex {
    static final int ENTRY_SIZE = 8;

    private final long baseOffset;
    private final IndexFile file;
    private int[] relativeOffsets = new int[16];
    private int[] positions = new int[16];
    private int entries;
    private boolean mirror; // false while rebuilding: the file is written once at the end instead

    OffsetIndex(long baseOffset, IndexFile file, boolean mirror) {
        this.baseOffset = baseOffset;
        this.file = file;
        this.mirror = mirror;
    }

    /** Records that the batch at {@code position} ends at {@code lastOffset}. */
    void append(long lastOffset, int position) throws IOException {
        int rel = Math.toIntExact(lastOffset - baseOffset);
        if (entries > 0 && (rel <= relativeOffsets[entries - 1] || position <= positions[entries - 1])) {
            throw new IllegalStateException("offset index entries must increase: " + lastOffset + "@" + position);
        }
        if (entries == relativeOffsets.length) {
            relativeOffsets = Arrays.copyOf(relativeOffsets, entries * 2);
            positions = Arrays.copyOf(positions, entries * 2);
        }
        relativeOffsets[entries] = rel;
        positions[entries] = position;
        entries++;
        if (mirror) {
            file.append(ByteBuffer.allocate(ENTRY_SIZE).putInt(rel).putInt(position).flip());
        }
    }

    /**
     * A file position at or before the batch containing {@code offset}: the position of the last
     * indexed batch ending at or before {@code offset}, or 0. Because that batch ends at or before
     * the target, the target lies in it or in a later batch.
     */
    int lookup(long offset) {
        long rel = offset - baseOffset;
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (relativeOffsets[mid] <= rel) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? 0 : positions[found];
    }

    int entries() {
        return entries;
    }

    /** Ends a rebuild: writes all entries to the file at once and mirrors later appends. */
    void persist() throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(entries * ENTRY_SIZE);
        for (int i = 0; i < entries; i++) {
            buf.putInt(relativeOffsets[i]).putInt(positions[i]);
        }
        file.replaceWith(buf.flip());
        mirror = true;
    }

    void closeFile() throws IOException {
        file.close();
    }

    void deleteFile() throws IOException {
        file.delete();
    }
}
