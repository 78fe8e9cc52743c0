package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Sparse offset index of one segment: entries (offset relative to the segment base, file
 * position of a batch whose last offset is that offset), in increasing order of both. A lookup
 * returns a position from which a forward scan of batch headers finds the wanted offset.
 *
 * <p>Mirrored to the {@code .index} file as 8-byte big-endian (relative offset, position) pairs;
 * see {@link SparseIndex}.
 */
final class OffsetIndex extends SparseIndex {
    static final int ENTRY_SIZE = 8;

    private int[] relativeOffsets = new int[INITIAL_CAPACITY];
    private int[] positions = new int[INITIAL_CAPACITY];

    OffsetIndex(long baseOffset, IndexFile file, boolean mirror) {
        super(baseOffset, file, ENTRY_SIZE, mirror);
    }

    /** Records that the batch at {@code position} ends at {@code lastOffset}. */
    void append(long lastOffset, int position) throws IOException {
        int rel = relative(lastOffset);
        int last = entries() - 1;
        if (last >= 0 && (rel <= relativeOffsets[last] || position <= positions[last])) {
            throw new IllegalStateException("offset index entries must increase: " + lastOffset + "@" + position);
        }
        add(rel, position);
    }

    /**
     * A file position at or before the batch containing {@code offset}: the position of the last
     * indexed batch ending at or before {@code offset}, or 0. Because that batch ends at or before
     * the target, the target lies in it or in a later batch.
     */
    int lookup(long offset) {
        int found = lastEntryBelow(offset - baseOffset, true);
        return found < 0 ? 0 : positions[found];
    }

    @Override
    long keyAt(int i) {
        return relativeOffsets[i];
    }

    @Override
    void store(int i, long key, int value) {
        if (i == relativeOffsets.length) {
            relativeOffsets = Arrays.copyOf(relativeOffsets, i * 2);
            positions = Arrays.copyOf(positions, i * 2);
        }
        relativeOffsets[i] = (int) key;
        positions[i] = value;
    }

    @Override
    void encode(int i, ByteBuffer dst) {
        dst.putInt(relativeOffsets[i]).putInt(positions[i]);
    }
}
