package io.pier.console;

/**
 * The last {@code capacity} samples of one series, each a wall-clock time and a value; adding to a
 * full buffer drops the oldest. Fixed memory: two arrays of {@code capacity} longs. Not
 * thread-safe: {@link History} guards it.
 */
final class RingBuffer {
    private final long[] timesMs;
    private final long[] values;
    /** Where the next sample goes. */
    private int next;
    private int size;

    RingBuffer(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        timesMs = new long[capacity];
        values = new long[capacity];
    }

    void add(long timeMs, long value) {
        timesMs[next] = timeMs;
        values[next] = value;
        next = (next + 1) % timesMs.length;
        size = Math.min(size + 1, timesMs.length);
    }

    int size() {
        return size;
    }

    int capacity() {
        return timesMs.length;
    }

    /** A copy of the samples, oldest first. */
    Samples samples() {
        long[] t = new long[size];
        long[] v = new long[size];
        int first = (next - size + timesMs.length) % timesMs.length;
        for (int i = 0; i < size; i++) {
            int at = (first + i) % timesMs.length;
            t[i] = timesMs[at];
            v[i] = values[at];
        }
        return new Samples(t, v);
    }

    /** Samples of a series, oldest first. Immutable (it owns copies of the arrays). */
    static final class Samples {
        static final Samples NONE = new Samples(new long[0], new long[0]);

        private final long[] timesMs;
        private final long[] values;

        Samples(long[] timesMs, long[] values) {
            if (timesMs.length != values.length) {
                throw new IllegalArgumentException("times and values differ in length");
            }
            this.timesMs = timesMs.clone();
            this.values = values.clone();
        }

        int size() {
            return values.length;
        }

        long timeMs(int i) {
            return timesMs[i];
        }

        long value(int i) {
            return values[i];
        }

        long max() {
            long max = 0;
            for (long v : values) {
                max = Math.max(max, v);
            }
            return max;
        }
    }
}
