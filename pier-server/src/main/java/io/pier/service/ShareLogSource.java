package io.pier.service;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.pier.group.AutoOffsetReset;
import io.pier.log.OffsetAndTimestamp;
import io.pier.log.PartitionLog;

/**
 * Where the records a share-partition hands out come from, as far as loading it is concerned: the
 * first start offset {@code share.auto.offset.reset} picks, and a log that holds the records from
 * a start offset on. On a broker both are its own log's ({@link #LOCAL}); on a gateway the log is a
 * mirror of an upstream partition, the offsets are the upstream's, and the mirror must first reach
 * back to the start ({@link #cover}).
 */
public interface ShareLogSource {
    /**
     * The first start offset of a new share-partition of {@code partition}, by the group's
     * {@code share.auto.offset.reset} as {@code reset} reads it (a gateway first catches up with
     * the settings other nodes wrote). Called on the partition's shard; the future may complete
     * on any thread.
     */
    CompletableFuture<Long> initialStartOffset(Partition partition, Supplier<AutoOffsetReset> reset, long nowWallMs);

    /**
     * Makes the partition's log hold its records from {@code start} on, before a share-partition
     * starting there reads it. Called on the partition's shard; the future may complete on any
     * thread.
     */
    CompletableFuture<Void> cover(Partition partition, long start);

    /**
     * The end offset a share-partition's lag is counted to (the high watermark): the broker's own,
     * or the upstream's. Any thread.
     */
    CompletableFuture<Long> endOffset(Partition partition);

    /**
     * Completes once the group settings written before the call apply here: before a share-partition
     * with stored state is loaded, since how it acquires depends on them (ordering by key, the
     * isolation level). A broker's own settings always apply; a gateway node catches up with
     * those other nodes wrote. Any thread.
     */
    default CompletableFuture<Void> groupSettingsApplied() {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Whether the partitions' logs are caches of records kept elsewhere (a gateway's mirrors), so
     * what no share-partition needs any more may be deleted ({@link MirrorTrimStep}); a broker's
     * own log is kept by its retention settings alone.
     */
    default boolean cachesRecords() {
        return false;
    }

    /** The broker's own log: offsets from it; it holds everything it has not deleted. */
    ShareLogSource LOCAL = new ShareLogSource() {
        @Override
        public CompletableFuture<Long> initialStartOffset(Partition partition, Supplier<AutoOffsetReset> settings,
                long nowWallMs) {
            PartitionLog log = partition.log();
            AutoOffsetReset reset = settings.get();
            try {
                return CompletableFuture.completedFuture(switch (reset.strategy()) {
                    case EARLIEST -> log.logStartOffset();
                    case BY_DURATION -> {
                        OffsetAndTimestamp found = log.offsetForTimestamp(nowWallMs - reset.duration().toMillis());
                        yield found == null ? log.highWatermark() : found.offset();
                    }
                    default -> log.highWatermark();
                });
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public CompletableFuture<Void> cover(Partition partition, long start) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Long> endOffset(Partition partition) {
            return partition.shard().call(() -> partition.log().highWatermark());
        }
    };
}
