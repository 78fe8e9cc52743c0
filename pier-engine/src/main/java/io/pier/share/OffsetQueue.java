package io.pier.share;

import java.util.Arrays;

/**
 * The unsettled offsets of one key, ascending, without boxing: a ring of longs that takes offsets
 * at either end and gives them from the front. Almost every key has one or two; it grows when a
 * key has more. Single owner; not thread-safe.
 */
final class OffsetQueue {
    private long[] ring = new long[2];
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** The lowest offset; only when not empty. */
    long first() {
        return ring[head];
    }

    /** The highest offset; only when not empty. */
    long last() {
        return ring[(head + size - 1) & (ring.length - 1)];
    }

    /** The second lowest offset; only with two or more. */
    long second() {
        return ring[(head + 1) & (ring.length - 1)];
    }

    void addLast(long offset) {
        growIfFull();
        ring[(head + size) & (ring.length - 1)] = offset;
        size++;
    }

    void addFirst(long offset) {
        growIfFull();
        head = (head - 1) & (ring.length - 1);
        ring[head] = offset;
        size++;
    }

    long removeFirst() {
        long first = ring[head];
        head = (head + 1) & (ring.length - 1);
        size--;
        return first;
    }

    /** Removes {@code offset} wherever it is; false if it is not here. Linear, for the rare settle out of order. */
    boolean remove(long offset) {
        for (int i = 0; i < size; i++) {
            if (ring[(head + i) & (ring.length - 1)] == offset) {
                for (int j = i; j < size - 1; j++) {
                    ring[(head + j) & (ring.length - 1)] = ring[(head + j + 1) & (ring.length - 1)];
                }
                size--;
                return true;
            }
        }
        return false;
    }

    /** Empties it for reuse by another key. */
    void clear() {
        head = 0;
        size = 0;
    }

    private void growIfFull() {
        if (size < ring.length) {
            return;
        }
        long[] grown = new long[ring.length * 2];
        for (int i = 0; i < size; i++) {
            grown[i] = ring[(head + i) & (ring.length - 1)];
        }
        ring = grown;
        head = 0;
    }

    @Override
    public String toString() {
        long[] out = new long[size];
        for (int i = 0; i < size; i++) {
            out[i] = ring[(head + i) & (ring.length - 1)];
        }
        return Arrays.toString(out);
    }
}
