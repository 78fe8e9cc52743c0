package io.pier.share;

/**
 * Boundaries of one record batch the server read from the log, inclusive. A control batch (a
 * transaction marker) holds no record a consumer may get: its offsets are archived, never acquired.
 */
public record LogBatch(long firstOffset, long lastOffset, boolean control) {
    public LogBatch {
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException("bad range " + firstOffset + ".." + lastOffset);
        }
    }

    /** A batch of data records. */
    public LogBatch(long firstOffset, long lastOffset) {
        this(firstOffset, lastOffset, false);
    }
}
