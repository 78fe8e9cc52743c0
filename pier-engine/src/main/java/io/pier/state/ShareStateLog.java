package io.pier.state;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Where the share-state records are stored: an ordered, offset-addressed log of (key, value)
 * records as {@link ShareStateRecords} encodes them. This is the I/O half of the share-state
 * persister; what to write, when to snapshot and how far the start may move is decided by
 * {@link DurableSharePersister} ({@link DurableOffsetStore} keeps committed offsets in one too),
 * whose {@link DurableStoreAgent} is the only writer. {@link LocalShareStateLog} keeps the
 * records on Pier's own partition log; in gateway mode {@code KafkaShareStateLog} keeps them on a
 * topic of the upstream Kafka cluster ({@code ShareStateLogContract} in the tests checks the same
 * contract for every backend).
 *
 * <pre>
 *   startOffset                      durable end                 endOffset
 *   |  replayed on open                   |  appended, not yet flushed  |
 *   +-------------------------------------+-----------------------------+
 *   moveStart(o): everything below o may go     flush(): durable end = endOffset
 * </pre>
 *
 * <p><b>Threading.</b> Used by one thread at a time: the persister's agent thread, or the opening
 * thread before the agent starts. Implementations need no locks.
 *
 * <p><b>Failure.</b> Any {@link IOException} (or runtime failure) from {@link #append},
 * {@link #flush} or {@link #moveStart} is fatal to the caller: it never retries, and what was not
 * flushed may or may not survive. Opening an implementation drops a torn tail (a write cut short
 * after the last flush) and refuses damage inside the durable records with an error that names
 * where it is.
 */
public interface ShareStateLog extends AutoCloseable {

    /**
     * One record to append: a key and a value as encoded by {@link ShareStateRecords}; a null
     * value is a tombstone (a deleted share-partition or group).
     */
    record Entry(byte[] key, byte[] value) {}

    /** Receives the stored records in offset order, on the replaying thread. */
    @FunctionalInterface
    interface Visitor {
        /** A record at {@code offset}; {@code value} is null for a tombstone. */
        void onRecord(long offset, ByteBuffer key, ByteBuffer value) throws IOException;
    }

    /**
     * Appends {@code entries} at consecutive offsets starting at {@link #endOffset()} and returns
     * the first one. Nothing is durable until {@link #flush()} returns.
     */
    long append(List<Entry> entries) throws IOException;

    /**
     * Makes everything appended so far durable (one fsync for the local log: group commit). It may
     * move {@link #endOffset()} on past the records: an upstream Kafka topic's transaction commit
     * adds a marker that takes an offset. So offsets always increase, and are consecutive within
     * what one flush covers, but not necessarily across flushes.
     */
    void flush() throws IOException;

    /**
     * How soon after a flush {@link #flush} must be called again, with nothing appended, to finish
     * what the flush left open; {@link Long#MAX_VALUE} (the default) when nothing is left. An
     * upstream Kafka topic keeps its transaction open across flushes, and such a flush commits it.
     */
    default long syncWithinMs() {
        return Long.MAX_VALUE;
    }

    /** Calls {@code visitor} for every durable record from {@link #startOffset()}, in offset order. */
    void replay(Visitor visitor) throws IOException;

    /** The first offset that is still stored (replay starts here); survives a reopen. */
    long startOffset();

    /** The offset the next appended record gets; every record below it is durable after a flush. */
    long endOffset();

    /**
     * True when moving the start forward could free storage (the local log: it has more than one
     * segment, since only whole segments below the start are deleted).
     */
    boolean reclaimable();

    /**
     * Moves the start to {@code offset} durably, then frees storage wholly below it. A move to or
     * below the current start does nothing.
     *
     * @throws IllegalArgumentException if {@code offset} is beyond the durable end
     */
    void moveStart(long offset) throws IOException;

    /** Where the records live, for log lines and error messages (a folder, a topic). */
    String name();

    /** Forces what is appended (unless the log failed) and releases its files or connections. */
    @Override
    void close();
}
