package io.pier.log;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.RecordsSend;

/**
 * Whole record batches left where they are on a log's segment files: one {@link FileRecords} slice
 * (segment channel, position, size) per segment a read spans, in offset order. Made on the log's
 * thread by {@link PartitionLog#readInPlace}; its {@link #toSend() send} is then written by a
 * network thread, which hands each slice to {@link TransferableChannel#transferFrom} (on a socket:
 * {@code FileChannel.transferTo}, sendfile on Linux), so the bytes never pass through the heap.
 *
 * <p>Immutable, so it may cross threads. It does not keep its segments alive: if one is deleted
 * (retention, DeleteRecords, the topic) before or while its bytes are written, its channel is
 * closed and writing fails with an {@link IOException}; the caller then closes that connection
 * and the client fetches again. A closed {@code FileChannel} refuses every operation, so a send
 * never reads another file that reused the descriptor; and a slice whose file became shorter
 * fails instead of sending fewer bytes than the response announced.
 */
public final class SegmentRecords implements BaseRecords {
    /** No batches. */
    public static final SegmentRecords EMPTY = new SegmentRecords(List.of());

    private final List<FileRecords> slices;
    private final int sizeInBytes;

    SegmentRecords(List<FileRecords> slices) {
        this.slices = List.copyOf(slices);
        long size = 0;
        for (FileRecords slice : this.slices) {
            size += slice.sizeInBytes();
        }
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("slices of " + size + " bytes");
        }
        this.sizeInBytes = (int) size;
    }

    @Override
    public int sizeInBytes() {
        return sizeInBytes;
    }

    /** The slices, oldest first; for tests and diagnostics. */
    List<FileRecords> slices() {
        return slices;
    }

    @Override
    public RecordsSend<SegmentRecords> toSend() {
        return new SegmentSend(this);
    }

    @Override
    public String toString() {
        return "SegmentRecords(" + slices.size() + " slices, " + sizeInBytes + " bytes)";
    }

    /** Writes the slices in turn; each call moves on within one slice only. */
    private static final class SegmentSend extends RecordsSend<SegmentRecords> {
        SegmentSend(SegmentRecords records) {
            super(records, records.sizeInBytes());
        }

        @Override
        protected int writeTo(TransferableChannel channel, int previouslyWritten, int remaining) throws IOException {
            int skip = previouslyWritten;
            for (FileRecords slice : records().slices) {
                int size = slice.sizeInBytes();
                if (skip < size) {
                    try {
                        return slice.writeTo(channel, skip, Math.min(remaining, size - skip));
                    } catch (ClosedChannelException e) {
                        if (slice.channel().isOpen()) {
                            throw e; // the socket's, not the segment's
                        }
                        throw new IOException("segment " + slice.file().getName() + " was closed (deleted) with "
                                + (size - skip) + " of its bytes still to send", e);
                    }
                }
                skip -= size;
            }
            return 0;
        }
    }
}
