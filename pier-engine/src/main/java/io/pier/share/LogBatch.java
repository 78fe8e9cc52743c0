package io.pier.share;

/** Boundaries of one record batch the server read from the log, inclusive. */
public record LogBatch(long firstOffset, long lastOffset) {
    public LogBatch {
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException("bad range " + firstOffset + ".." + lastOffset);
        }
    }
}
