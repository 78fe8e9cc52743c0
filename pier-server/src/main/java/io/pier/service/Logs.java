package io.pier.service;

import io.pier.log.AbortedTransaction;
import io.pier.log.ActiveProducer;
import io.pier.log.AppendResult;
import io.pier.log.LogReadResult;
import io.pier.log.OffsetAndTimestamp;
import io.pier.log.PartitionLog;
import io.pier.log.SegmentRecords;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commands the protocol layer gives partition logs: append, read, find an offset, delete
 * records. Each runs on the shard that owns the partition and completes with a value that
 * carries a Kafka error code instead of throwing; callers never see a log or a shard.
 */
public final class Logs implements ProducerStates {
    private static final Logger LOG = LoggerFactory.getLogger(Logs.class);
    private static final long UNKNOWN = -1L;

    private final PartitionRegistry partitions;

    public Logs(PartitionRegistry partitions) {
        this.partitions = partitions;
    }

    /** Outcome of an append; the offsets are -1 on error. */
    public record Appended(Errors error, String message, long baseOffset, long logAppendTimeMs, long logStartOffset) {
        static Appended failed(Errors error, String message) {
            return new Appended(error, message, UNKNOWN, UNKNOWN, UNKNOWN);
        }
    }

    /**
     * Outcome of a read; -1 offsets when the partition is unknown. The records are still on the
     * segment files ({@link SegmentRecords}): send them, do not parse them. For a read_committed
     * read, {@code abortedTransactions} are those overlapping the records; otherwise it is empty.
     */
    public record Read(Errors error, SegmentRecords records, long highWatermark, long lastStableOffset,
            long logStartOffset, List<AbortedTransaction> abortedTransactions) {
        static Read failed(Errors error, long highWatermark, long lastStableOffset, long logStartOffset) {
            return new Read(error, SegmentRecords.EMPTY, highWatermark, lastStableOffset, logStartOffset, List.of());
        }
    }

    /** An offset (and its record's timestamp) found for a ListOffsets query; -1 when there is none. */
    public record Found(Errors error, long offset, long timestampMs) {
        static final Found NONE = new Found(Errors.NONE, UNKNOWN, UNKNOWN);
    }

    /** The new log start offset after a DeleteRecords, or -1 on error. */
    public record Deleted(Errors error, long lowWatermark) {}

    /**
     * Appends one batch; completes once it is durable ({@code durable} mode: after the shard has
     * heard from its flusher that the group commit covering it was forced), and wakes the long
     * polls parked on the partition. If that is not known (an fsync failed, the broker stopped
     * first) it completes with an error instead, never with success.
     */
    public CompletableFuture<Appended> append(TopicPartition tp, MemoryRecords records) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(Appended.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
        }
        CompletableFuture<Appended> result = new CompletableFuture<>();
        Shard shard = partition.shard();
        try {
            // A transactional batch was checked against its transaction by the Produce path first.
            shard.execute(() -> appendOnShard(partition, result, () -> partition.log().append(records)));
        } catch (RuntimeException e) {
            result.complete(Appended.failed(Errors.NOT_LEADER_OR_FOLLOWER, e.getMessage()));
        }
        return result;
    }

    /** The partition, or null if this broker has no such partition. */
    public Partition partition(TopicPartition tp) {
        return partitions.get(tp);
    }

    /**
     * Gateway mirrors: appends record batches of an upstream Fetch answer at their own offsets
     * ({@link io.pier.log.PartitionLog#appendMirrored}) on the partition's shard and wakes the long
     * polls parked on it once they are readable; completes with the log's end offset after them.
     * The records are appended only if the log still ends at {@code fetchedFrom}, the offset they
     * were fetched from: an answer that crossed a restart of the mirror is dropped.
     */
    public CompletableFuture<Long> appendMirrored(Partition partition, long fetchedFrom, MemoryRecords records) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        try {
            partition.shard().execute(() -> {
                if (partition.isDeleted()) {
                    result.completeExceptionally(new UnknownTopicOrPartitionException(partition.topicPartition()
                            + " was deleted"));
                    return;
                }
                try {
                    if (partition.log().logEndOffset() != fetchedFrom || partition.log().appendMirrored(records) == 0) {
                        result.complete(partition.log().logEndOffset());
                        return;
                    }
                } catch (IOException e) {
                    result.completeExceptionally(e);
                    partition.shard().onStorageError("mirrored append to " + partition.topicPartition() + " failed", e);
                    return;
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                    return;
                }
                partition.shard().afterFlush(partition.log(), new Shard.FlushWaiter() {
                    @Override
                    public void onDurable() {
                        partition.fireDataListeners();
                        result.complete(partition.log().logEndOffset());
                    }

                    @Override
                    public void onNotDurable(Errors error, String message) {
                        result.completeExceptionally(error.exception(message));
                    }
                });
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** Where a mirror's log ends after {@link #coverMirror}, and whether it restarted there. */
    public record MirrorCover(long end, boolean restarted) {}

    /**
     * Gateway mirrors, on the partition's shard only: makes its log start at {@code start} when
     * {@code restart} says so or when it starts after {@code start} (a share-partition needs older
     * records); returns where it ends and whether it restarted, so the fetcher starts over there.
     */
    public MirrorCover coverMirror(Partition partition, long start, boolean restart) throws IOException {
        PartitionLog log = partition.log();
        boolean restarting = restart || start < log.logStartOffset();
        if (restarting) {
            log.restartMirrorAt(start);
        }
        return new MirrorCover(log.logEndOffset(), restarting);
    }

    /**
     * Gateway mirrors: empties the partition's log and starts it at {@code offset} on its shard
     * (the upstream's retention passed the mirror), waking the long polls parked on it so its
     * share-partitions see the new start.
     */
    public CompletableFuture<Void> restartMirror(Partition partition, long offset) {
        return partition.shard().call(() -> {
            partition.log().restartMirrorAt(offset);
            partition.fireDataListeners();
            return null;
        });
    }

    /** One write to a partition's log, run on its shard. */
    @FunctionalInterface
    private interface LogWrite {
        AppendResult write() throws Exception;
    }

    /** Runs {@code write} and completes {@code result} once it is durable, or with its error. */
    private static void appendOnShard(Partition partition, CompletableFuture<Appended> result, LogWrite write) {
        if (partition.isDeleted()) {
            result.complete(Appended.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
            return;
        }
        AppendResult appended;
        try {
            appended = write.write();
        } catch (ApiException e) {
            result.complete(Appended.failed(Errors.forException(e), e.getMessage()));
            return;
        } catch (IOException | UncheckedIOException e) {
            result.complete(Appended.failed(Errors.KAFKA_STORAGE_ERROR, e.getMessage()));
            partition.shard().onStorageError("append to " + partition.topicPartition() + " failed", e);
            return;
        } catch (Exception e) {
            LOG.error("Append to {} failed", partition.topicPartition(), e);
            result.complete(Appended.failed(Errors.KAFKA_STORAGE_ERROR, e.getMessage()));
            return;
        }
        partition.shard().afterFlush(partition.log(), new Shard.FlushWaiter() {
            @Override
            public void onDurable() {
                partition.fireDataListeners();
                result.complete(new Appended(Errors.NONE, null, appended.baseOffset(), appended.logAppendTimeMs(),
                        appended.logStartOffset()));
            }

            @Override
            public void onNotDurable(Errors error, String message) {
                result.complete(Appended.failed(error, message));
            }
        });
    }

    /**
     * Writes the end-transaction marker of {@code producerId} (COMMIT or ABORT) to a partition for
     * the transaction coordinator; completes once it is durable, as {@link #append} does, and wakes
     * the long polls parked on the partition: a read_committed fetch waiting at the last stable
     * offset sees it move then. A stale producer epoch answers INVALID_PRODUCER_EPOCH, an older
     * coordinator epoch TRANSACTION_COORDINATOR_FENCED. Legacy epoch rule (transaction version
     * below 2): the marker's epoch may equal the producer's current one.
     */
    public CompletableFuture<Appended> writeMarker(TopicPartition tp, long producerId, short producerEpoch,
            int coordinatorEpoch, boolean commit) {
        return writeMarker(tp, producerId, producerEpoch, coordinatorEpoch, commit, (short) 1);
    }

    /**
     * As {@link #writeMarker(TopicPartition, long, short, int, boolean)}, for a coordinator of
     * {@code transactionVersion}: from version 2 on each marker carries a bumped epoch, and one
     * with the producer's current epoch is stale.
     */
    @Override
    public CompletableFuture<Appended> writeMarker(TopicPartition tp, long producerId, short producerEpoch,
            int coordinatorEpoch, boolean commit, short transactionVersion) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(Appended.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
        }
        CompletableFuture<Appended> result = new CompletableFuture<>();
        try {
            partition.shard().execute(() -> appendOnShard(partition, result, () -> partition.log()
                    .appendEndTxnMarker(producerId, producerEpoch, coordinatorEpoch, commit, transactionVersion)));
        } catch (RuntimeException e) {
            result.complete(Appended.failed(Errors.NOT_LEADER_OR_FOLLOWER, e.getMessage()));
        }
        return result;
    }

    /** The producer state of a partition, copied on its shard (DescribeProducers). */
    @Override
    public CompletableFuture<Producers> activeProducers(TopicPartition tp) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(new Producers(Errors.UNKNOWN_TOPIC_OR_PARTITION, List.of()));
        }
        return partition.shard().call(() -> {
            if (partition.isDeleted()) {
                return new Producers(Errors.UNKNOWN_TOPIC_OR_PARTITION, List.<ActiveProducer>of());
            }
            return new Producers(Errors.NONE, partition.log().activeProducers());
        });
    }

    /**
     * Reads whole batches from {@code offset}, at most {@code maxBytes} (at least one batch),
     * without copying them: the result refers to their place on the segment files, to be sent
     * as they are (Fetch). Callers that parse or slice records read the log on its shard. If
     * nothing was there and {@code wake} is given, it is called the next time data may have come.
     */
    public CompletableFuture<Read> read(TopicPartition tp, long offset, int maxBytes, Partition.DataListener wake) {
        return read(tp, offset, maxBytes, IsolationLevel.READ_UNCOMMITTED, wake);
    }

    /**
     * As {@link #read(TopicPartition, long, int, Partition.DataListener)}, for a consumer with
     * {@code isolation}: under READ_COMMITTED only records below the last stable offset, with the
     * aborted transactions they overlap. A read_committed fetch parked at the last stable offset
     * is woken by any change and parks again until a marker (made durable) moves it.
     */
    public CompletableFuture<Read> read(TopicPartition tp, long offset, int maxBytes, IsolationLevel isolation,
            Partition.DataListener wake) {
        Partition p = partitions.get(tp);
        if (p == null) {
            return CompletableFuture.completedFuture(
                    Read.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN, UNKNOWN, UNKNOWN));
        }
        return p.shard().call(() -> {
            if (p.isDeleted()) {
                return Read.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN, UNKNOWN, UNKNOWN);
            }
            PartitionLog log = p.log();
            try {
                LogReadResult<SegmentRecords> r = log.readInPlace(offset, maxBytes, true, isolation);
                if (wake != null && r.records().sizeInBytes() == 0) {
                    p.onNextDataChange(wake);
                }
                return new Read(Errors.NONE, r.records(), r.highWatermark(), r.lastStableOffset(),
                        r.logStartOffset(), r.abortedTransactions());
            } catch (ApiException e) {
                return Read.failed(Errors.forException(e), log.highWatermark(), log.lastStableOffset(),
                        log.logStartOffset());
            }
        });
    }

    /**
     * ListOffsets' question for one partition: earliest, latest (the high watermark), the record
     * with the largest timestamp, or the first offset at or after a timestamp.
     */
    public CompletableFuture<Found> offsetFor(TopicPartition tp, long timestamp) {
        return offsetFor(tp, timestamp, IsolationLevel.READ_UNCOMMITTED);
    }

    /**
     * As {@link #offsetFor(TopicPartition, long)}, for a consumer with {@code isolation}: under
     * READ_COMMITTED latest is the last stable offset, and an offset found by timestamp counts
     * only below it (as Kafka answers: what that consumer could fetch).
     */
    public CompletableFuture<Found> offsetFor(TopicPartition tp, long timestamp, IsolationLevel isolation) {
        boolean committed = isolation == IsolationLevel.READ_COMMITTED;
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(new Found(Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN, UNKNOWN));
        }
        return partition.shard().call(() -> {
            PartitionLog log = partition.log();
            if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
                    || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                return new Found(Errors.NONE, log.logStartOffset(), UNKNOWN);
            }
            long fetchable = committed ? log.lastStableOffset() : log.highWatermark();
            if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                return new Found(Errors.NONE, fetchable, UNKNOWN);
            }
            if (timestamp == ListOffsetsRequest.MAX_TIMESTAMP) {
                return found(log.maxTimestamp(), fetchable);
            }
            if (timestamp < 0) {
                // Tiered-storage lookups: nothing is tiered, so there is no such offset.
                return Found.NONE;
            }
            return found(log.offsetForTimestamp(timestamp), fetchable);
        });
    }

    private static Found found(OffsetAndTimestamp at, long fetchableEnd) {
        return at == null || at.offset() >= fetchableEnd ? Found.NONE
                : new Found(Errors.NONE, at.offset(), at.timestampMs());
    }

    /** DeleteRecords for one partition: moves the log start to {@code offset} (-1: the high watermark). */
    public CompletableFuture<Deleted> deleteRecordsBefore(TopicPartition tp, long offset) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(new Deleted(Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN));
        }
        return partition.shard().call(() -> {
            PartitionLog log = partition.log();
            long target = offset == DeleteRecordsRequest.HIGH_WATERMARK ? log.highWatermark() : offset;
            if (target < 0) {
                return new Deleted(Errors.OFFSET_OUT_OF_RANGE, UNKNOWN);
            }
            try {
                long low = log.deleteRecordsBefore(target);
                partition.fireDataListeners();
                return new Deleted(Errors.NONE, low);
            } catch (ApiException e) {
                return new Deleted(Errors.forException(e), UNKNOWN);
            } catch (IOException e) {
                partition.shard().onStorageError("DeleteRecords on " + tp + " failed", e);
                return new Deleted(Errors.KAFKA_STORAGE_ERROR, UNKNOWN);
            }
        });
    }
}
