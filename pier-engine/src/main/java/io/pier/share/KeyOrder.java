package io.pier.share;

import java.util.ArrayDeque;
import java.util.BitSet;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Per-key order of one share-partition's in-flight window ({@code pier.share.ordering=key}): for
 * each key, the offsets of its records that are not settled for good (not ACKNOWLEDGED or
 * ARCHIVED), ascending. A keyed record may be acquired only while it is the first of its key, so
 * no two consumers ever hold records of one key and a key's records go out in offset order.
 * Records without a key ({@link #NO_KEY}) are not ordered.
 *
 * <p>Keys are 64-bit hashes: two keys with one hash are ordered as one key, which is stricter,
 * never looser. Also keeps the offsets acquisition may take now ({@link #ready}), so that finding
 * the next one skips blocked records without scanning the window.
 *
 * <p>Single owner (the window's); not thread-safe.
 */
final class KeyOrder {
    /** The key of a record without one, or whose key is not known. */
    static final long NO_KEY = 0;

    /** By key hash: a primitive map, as this is asked for every record acquisition looks at. */
    private final Long2ObjectHashMap<OffsetQueue> open = new Long2ObjectHashMap<>();
    /** Queues of keys that closed, for keys that open next: most keys open and close again and again. */
    private final ArrayDeque<OffsetQueue> spare = new ArrayDeque<>();
    private static final int MAX_SPARE = 1024;

    /** Offsets acquisition may take now, as bits from {@link #base}: no boxing on the per-record path. */
    private BitSet ready = new BitSet();
    private long base;
    private int readyCount;
    /** How far the window start may run ahead of {@link #base} before the bits are moved down. */
    private static final long REBASE_AFTER = 1 << 16;

    /** @param windowStart the window's start offset: no offset below it is ever marked */
    KeyOrder(long windowStart) {
        this.base = windowStart;
    }

    /**
     * A record of {@code key} is in the window unsettled: it entered it, or its key was learned.
     * Records enter in offset order; keys learned for records already in the window come from the
     * highest offset down, so each lands at one end of its key's offsets.
     */
    void open(long offset, long key) {
        if (key == NO_KEY) {
            return;
        }
        OffsetQueue offsets = open.get(key);
        if (offsets == null) {
            offsets = spare.isEmpty() ? new OffsetQueue() : spare.pop();
            open.put(key, offsets);
        }
        if (offsets.isEmpty() || offsets.last() < offset) {
            offsets.addLast(offset);
        } else if (offsets.first() > offset) {
            offsets.addFirst(offset);
        } else {
            throw new IllegalStateException("offset " + offset + " opened between others of its key " + offsets);
        }
    }

    /**
     * A record of {@code key} was settled for good, or left the window: the next of its key, if
     * any, becomes its first; returns that offset, or -1.
     */
    long close(long offset, long key) {
        if (key == NO_KEY) {
            return -1;
        }
        OffsetQueue offsets = open.get(key);
        if (offsets == null) {
            return -1;
        }
        if (!offsets.isEmpty() && offsets.first() == offset) {
            offsets.removeFirst();
        } else {
            offsets.remove(offset); // settled out of order: only records no consumer gets (aborted)
        }
        if (offsets.isEmpty()) {
            open.remove(key);
            if (spare.size() < MAX_SPARE) {
                offsets.clear();
                spare.push(offsets);
            }
            return -1;
        }
        return offsets.first();
    }

    /** Whether the record at {@code offset} is the first unsettled one of its key (always, without a key). */
    boolean isFirstOfKey(long offset, long key) {
        if (key == NO_KEY) {
            return true;
        }
        OffsetQueue offsets = open.get(key);
        return offsets == null || offsets.isEmpty() || offsets.first() == offset;
    }

    /** Whether {@code key} has an unsettled record in the window. */
    boolean isOpen(long key) {
        return key != NO_KEY && open.containsKey(key);
    }

    /** Marks whether the record at {@code offset} may be acquired now. */
    void ready(long offset, boolean acquirable) {
        int i = (int) (offset - base);
        if (i < 0) {
            throw new IllegalArgumentException("offset " + offset + " is below the window start " + base);
        }
        if (ready.get(i) != acquirable) {
            ready.set(i, acquirable);
            readyCount += acquirable ? 1 : -1;
        }
    }

    /** The first offset at or after {@code from} that may be acquired now, or -1 if none. */
    long nextReady(long from) {
        if (readyCount == 0) {
            return -1;
        }
        int i = ready.nextSetBit((int) Math.max(0, from - base));
        return i < 0 ? -1 : base + i;
    }

    int readyCount() {
        return readyCount;
    }

    /** The window starts at {@code start} now: nothing below it is ready; the bits move down now and then. */
    void forgetBelow(long start) {
        if (start - base > REBASE_AFTER) {
            int shift = (int) (start - base);
            ready = ready.get(shift, Math.max(shift, ready.length()));
            base = start;
        }
    }

    /** Keys with at least one record waiting behind an earlier record of theirs. */
    int blockedKeys() {
        int n = 0;
        for (OffsetQueue offsets : open.values()) {
            if (offsets.size() > 1) {
                n++;
            }
        }
        return n;
    }

    /** The lowest offset waiting behind an earlier record of its key, or -1 if none. */
    long oldestBlockedOffset() {
        long oldest = Long.MAX_VALUE;
        for (OffsetQueue offsets : open.values()) {
            if (offsets.size() > 1) {
                oldest = Math.min(oldest, offsets.second());
            }
        }
        return oldest == Long.MAX_VALUE ? -1 : oldest;
    }
}
