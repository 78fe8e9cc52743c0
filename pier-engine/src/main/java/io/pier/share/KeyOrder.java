package io.pier.share;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

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

    private final Map<Long, ArrayDeque<Long>> open = new HashMap<>();
    private final TreeSet<Long> ready = new TreeSet<>();

    /**
     * A record of {@code key} is in the window unsettled: it entered it, or its key was learned.
     * Records enter in offset order; keys learned for records already in the window come from the
     * highest offset down, so each lands at one end of its key's offsets.
     */
    void open(long offset, long key) {
        if (key == NO_KEY) {
            return;
        }
        ArrayDeque<Long> offsets = open.computeIfAbsent(key, k -> new ArrayDeque<>(2));
        if (offsets.isEmpty() || offsets.peekLast() < offset) {
            offsets.addLast(offset);
        } else if (offsets.peekFirst() > offset) {
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
        ArrayDeque<Long> offsets = open.get(key);
        if (offsets == null) {
            return -1;
        }
        Long first = offsets.peekFirst();
        if (first != null && first == offset) {
            offsets.pollFirst();
        } else {
            offsets.remove(offset); // settled out of order: only records no consumer gets (aborted)
        }
        if (offsets.isEmpty()) {
            open.remove(key);
            return -1;
        }
        return offsets.peekFirst();
    }

    /** Whether the record at {@code offset} is the first unsettled one of its key (always, without a key). */
    boolean isFirstOfKey(long offset, long key) {
        if (key == NO_KEY) {
            return true;
        }
        ArrayDeque<Long> offsets = open.get(key);
        return offsets == null || offsets.isEmpty() || offsets.peekFirst() == offset;
    }

    /** Whether {@code key} has an unsettled record in the window. */
    boolean isOpen(long key) {
        return key != NO_KEY && open.containsKey(key);
    }

    /** Marks whether the record at {@code offset} may be acquired now. */
    void ready(long offset, boolean acquirable) {
        if (acquirable) {
            ready.add(offset);
        } else {
            ready.remove(offset);
        }
    }

    /** The first offset at or after {@code from} that may be acquired now, or -1 if none. */
    long nextReady(long from) {
        Long next = ready.ceiling(from);
        return next == null ? -1 : next;
    }

    int readyCount() {
        return ready.size();
    }

    /** Keys with at least one record waiting behind an earlier record of theirs. */
    int blockedKeys() {
        int n = 0;
        for (ArrayDeque<Long> offsets : open.values()) {
            if (offsets.size() > 1) {
                n++;
            }
        }
        return n;
    }

    /** The lowest offset waiting behind an earlier record of its key, or -1 if none. */
    long oldestBlockedOffset() {
        long oldest = Long.MAX_VALUE;
        for (ArrayDeque<Long> offsets : open.values()) {
            if (offsets.size() > 1) {
                var it = offsets.iterator();
                it.next();
                oldest = Math.min(oldest, it.next());
            }
        }
        return oldest == Long.MAX_VALUE ? -1 : oldest;
    }
}
