package io.pier.share;

import io.pier.state.ShareStateWrite;
import java.util.Arrays;
import java.util.Optional;

/**
 * A settled-but-not-durable change of one share-partition: the offsets an acknowledgement or a
 * member release moved, and the write that makes it durable. The owner of the partition hands
 * {@link #write()} to the persister and then calls exactly one of {@link SharePartition#commit}
 * or {@link SharePartition#rollback}. Until then the offsets are in transition.
 */
public final class PendingChange {
    private final SharePartition partition;
    private long[] offsets;
    private byte[] causes;
    private int offsetCount;
    private ShareStateWrite write;
    private boolean resolved;

    PendingChange(SharePartition partition) {
        this(partition, 8);
    }

    /**
     * @param expectedOffsets how many offsets the change will likely move: an acknowledgement
     *     knows it from its batches, and sizing for it spares the doubling copies of a change of
     *     hundreds of offsets
     */
    PendingChange(SharePartition partition, int expectedOffsets) {
        this.partition = partition;
        int capacity = Math.max(1, expectedOffsets);
        this.offsets = new long[capacity];
        this.causes = new byte[capacity];
    }

    /** The write to persist; empty when nothing durable changed (RENEW only, or below SPSO). */
    public Optional<ShareStateWrite> write() {
        return Optional.ofNullable(write);
    }

    /** Number of offsets whose state this change moves. */
    public int offsetCount() {
        return offsetCount;
    }

    void add(long offset, ChangeCause cause) {
        if (offsetCount == offsets.length) {
            offsets = Arrays.copyOf(offsets, offsets.length * 2);
            causes = Arrays.copyOf(causes, causes.length * 2);
        }
        causes[offsetCount] = (byte) cause.ordinal();
        offsets[offsetCount++] = offset;
    }

    long offset(int i) {
        return offsets[i];
    }

    /** Why offset {@code i} moves: the acknowledgement type, or a member release. */
    ChangeCause cause(int i) {
        return ChangeCause.forOrdinal(causes[i]);
    }

    void write(ShareStateWrite w) {
        this.write = w;
    }

    void resolve(SharePartition by) {
        if (by != partition) {
            throw new IllegalArgumentException("pending change belongs to another share-partition");
        }
        if (resolved) {
            throw new IllegalStateException("pending change already committed or rolled back");
        }
        resolved = true;
    }

    @Override
    public String toString() {
        return "PendingChange[offsets=" + offsetCount + ", write=" + write + "]";
    }
}
