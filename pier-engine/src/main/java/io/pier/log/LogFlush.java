package io.pier.log;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * One group commit of one {@link PartitionLog}, cut in three so that the fsync can run on a thread
 * that does nothing else while the log's owner goes on serving:
 *
 * <pre>
 *   owner thread                      any thread (a flusher)            owner thread
 *   log.beginFlush() ──LogFlush──▶    flush.force() ──Forced──▶         log.completeFlush(flush, forced)
 *   what to force, computed here:     fdatasync each channel,           forced sizes, flushed end and high
 *   the dirty segments' channels,     the directory if a segment        watermark move to what was forced;
 *   their sizes, the end offset       was created, then the             AFTER_FSYNC_BEFORE_RESPONSE
 *   they cover, a recovery point      recovery point (only if every
 *   if one is due                     force ran)
 * </pre>
 *
 * <p>The object is immutable and refers to nothing the owner changes: channels, sizes and paths
 * captured by {@link PartitionLog#beginFlush}. {@link #force} reads only those; the segments are
 * kept for the owner's {@link PartitionLog#completeFlush} and never touched elsewhere. A channel
 * may be forced while the owner appends to it; a force covers at least every byte written before
 * it began, which is all the sizes here claim.
 *
 * <p>A segment that retention or DeleteRecords deletes while its force runs has its channel
 * closed under the force. That is not an fsync failure: its bytes left the log. The force reports
 * it by not writing the recovery point; {@link PartitionLog#completeFlush} then checks that every
 * segment not forced is really gone, and fails the flush if one is still part of the log.
 */
public final class LogFlush {
    private final Path dir;
    private final FileIO io;
    private final long end;
    private final LogSegment[] segments;
    private final FileChannel[] channels;
    private final int[] sizes;
    private final boolean syncDirectory;
    private final RecoveryPoint recoveryPoint;

    LogFlush(Path dir, FileIO io, long end, LogSegment[] segments, int[] sizes, boolean syncDirectory,
            RecoveryPoint recoveryPoint) {
        this.dir = dir;
        this.io = io;
        this.end = end;
        this.segments = segments;
        this.sizes = sizes;
        this.channels = new FileChannel[segments.length];
        for (int i = 0; i < segments.length; i++) {
            channels[i] = segments[i].channel();
        }
        this.syncDirectory = syncDirectory;
        this.recoveryPoint = recoveryPoint;
    }

    /** What {@link #force} did: nothing failed ({@link #failure} null), or the first failure. */
    public record Forced(IOException failure) {
        static final Forced OK = new Forced(null);
    }

    /** The log end offset this flush makes durable: the high watermark once it completes. */
    public long end() {
        return end;
    }

    /** Segment files this flush forces. */
    public int segmentCount() {
        return segments.length;
    }

    /**
     * Any thread, once: forces each channel ({@code fdatasync}), then the directory if a segment
     * was created since the last flush, then writes the recovery point if one is due and every
     * force ran. Never throws: a failure is returned, for the owner to treat as fatal (fsyncgate:
     * never retry, never acknowledge).
     */
    public Forced force() {
        try {
            io.crashPoint(CrashPoint.AFTER_APPEND_BEFORE_FSYNC);
            boolean allForced = true;
            for (FileChannel ch : channels) {
                allForced &= forceUnlessClosed(ch);
            }
            if (syncDirectory) {
                io.syncDirectory(dir); // a segment created since the last flush must survive power loss
            }
            if (recoveryPoint != null && allForced) {
                recoveryPoint.write(io, dir);
            }
            return Forced.OK;
        } catch (IOException e) {
            return new Forced(e);
        } catch (RuntimeException e) {
            return new Forced(new IOException("flush of " + dir + " failed", e));
        }
    }

    /**
     * Forces {@code ch}; false if it was closed (its segment deleted or its log closed by the
     * owner), in which case nothing is known about its bytes. A force that returns on a channel
     * still open did run: the JDK skips the system call only for a channel already closed.
     */
    private static boolean forceUnlessClosed(FileChannel ch) throws IOException {
        try {
            ch.force(false);
        } catch (ClosedByInterruptException e) {
            throw e; // this thread was interrupted: an error, not the owner's doing
        } catch (ClosedChannelException e) {
            return false;
        }
        return ch.isOpen();
    }

    // The owner's side, for PartitionLog.completeFlush.

    LogSegment segment(int i) {
        return segments[i];
    }

    int size(int i) {
        return sizes[i];
    }

    boolean channelOpen(int i) {
        return channels[i].isOpen();
    }

    @Override
    public String toString() {
        return "LogFlush(" + dir + ", end=" + end + ", segments=" + segments.length
                + (syncDirectory ? ", directory" : "") + (recoveryPoint != null ? ", " + recoveryPoint : "") + ")";
    }
}
