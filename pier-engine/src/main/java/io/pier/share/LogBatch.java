package io.pier.share;

/**
 * Boundaries of one record batch the server read from the log, inclusive, with what its header
 * says about transactions. A control batch (a transaction marker) holds no record a consumer may
 * get: its offsets are archived, never acquired. A transactional batch of an aborted transaction
 * is archived too when the group reads committed records only (see {@link Isolation}).
 *
 * @param producerId the producer id of the batch header, -1 for none
 * @param transactional whether the batch header has the transactional flag
 */
public record LogBatch(long firstOffset, long lastOffset, boolean control, long producerId, boolean transactional) {
    /** The producer id of a batch written without one. */
    public static final long NO_PRODUCER_ID = -1L;

    public LogBatch {
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException("bad range " + firstOffset + ".." + lastOffset);
        }
    }

    /** A batch of data records outside any transaction. */
    public LogBatch(long firstOffset, long lastOffset) {
        this(firstOffset, lastOffset, false);
    }

    /** A control batch, or a data batch outside any transaction. */
    public LogBatch(long firstOffset, long lastOffset, boolean control) {
        this(firstOffset, lastOffset, control, NO_PRODUCER_ID, false);
    }

    /** A batch of data records written in a transaction of {@code producerId}. */
    public static LogBatch transactional(long firstOffset, long lastOffset, long producerId) {
        return new LogBatch(firstOffset, lastOffset, false, producerId, true);
    }
}
