package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.CrashPoint;
import io.pier.log.Durability;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard and its flusher, each driven by hand: every interleaving of "the shard's cycle" and "the
 * flusher's force" is chosen by the test, with no thread and no timing. What a produce reply
 * waits for is a {@link Shard.FlushWaiter} that records what it was told.
 */
class ShardFlushTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(T0);
    private final List<String> fatal = new ArrayList<>();
    private final List<String> told = new ArrayList<>();
    private final Flusher flusher = new Flusher(0, Wakeup.NONE);
    private final Shard shard = new Shard(0, Wakeup.NONE, (what, cause) -> fatal.add(what), flusher);
    private final List<PartitionLog> logs = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        for (PartitionLog log : logs) {
            try {
                log.close();
            } catch (RuntimeException e) {
                // a log whose flush failed cannot be closed cleanly
            }
        }
    }

    private static LogConfig config(Durability durability, long segmentBytes) {
        return new LogConfig(segmentBytes, Long.MAX_VALUE, -1, -1, 1048588, 4096, false, durability);
    }

    private PartitionLog open(String name, LogConfig config, FileIO io) throws IOException {
        PartitionLog log = PartitionLog.open(dir.resolve(name), config, clock, io);
        logs.add(log);
        return log;
    }

    private PartitionLog open(String name) throws IOException {
        return open(name, config(Durability.DURABLE, 1 << 20), FileIO.REAL);
    }

    /** A produce, as Logs makes it: append on the shard, then wait for the flush. */
    private void produce(PartitionLog log, String value) {
        shard.execute(() -> {
            try {
                log.append(MemoryRecords.withRecords(Compression.NONE,
                        new SimpleRecord(clock.wallMs(), null, value.getBytes(StandardCharsets.UTF_8))));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            shard.afterFlush(log, new Shard.FlushWaiter() {
                @Override
                public void onDurable() {
                    told.add(value + ": durable");
                }

                @Override
                public void onNotDurable(Errors error, String message) {
                    told.add(value + ": " + error);
                }
            });
        });
    }

    private int shardCycle() {
        return shard.doWork(clock.monoMs());
    }

    private int flusherCycle() {
        return flusher.doWork(clock.monoMs());
    }

    private static List<String> values(MemoryRecords records) {
        List<String> out = new ArrayList<>();
        for (Record r : records.records()) {
            out.add(StandardCharsets.UTF_8.decode(r.value()).toString());
        }
        return out;
    }

    @Test
    void shouldAnswerAProduceOnlyOnceTheShardHasProcessedTheFlushersCompletion() throws IOException {
        PartitionLog log = open("p-0");

        // Given a produce appended, its flush handed to the flusher at the end of the cycle
        produce(log, "a");
        shardCycle();
        assertThat(told).isEmpty();
        assertThat(log.flushInFlight()).isTrue();

        // When the flusher forces it, the completion is only a command on the shard's queue
        assertThat(flusherCycle()).isEqualTo(1);
        assertThat(told).isEmpty();
        assertThat(log.highWatermark()).isZero();
        assertThat(shard.nextDeadlineMs()).as("the completion asks for a cycle").isLessThanOrEqualTo(clock.monoMs());

        // Then the shard's next cycle moves the high watermark and answers
        shardCycle();
        assertThat(told).containsExactly("a: durable");
        assertThat(log.highWatermark()).isEqualTo(1);
        assertThat(fatal).isEmpty();
    }

    @Test
    void shouldServeAnotherPartitionWhileAFlushIsInFlight() throws Exception {
        PartitionLog busy = open("p-0");
        PartitionLog other = open("p-1");
        produce(other, "old");
        shardCycle();
        flusherCycle();
        shardCycle();

        // Given a flush of one partition in flight (the flusher inside its fsync)
        produce(busy, "slow");
        shardCycle();

        // When a fetch of the other partition arrives, the shard serves it in its next cycle
        CompletableFuture<List<String>> fetched = shard.call(() -> values(other.read(0, 1 << 20, true).records()));
        shardCycle();

        // Then it is answered while the produce still waits for its fsync
        assertThat(fetched).isCompletedWithValue(List.of("old"));
        assertThat(told).containsExactly("old: durable");
        assertThat(busy.flushInFlight()).isTrue();
        flusherCycle();
        shardCycle();
        assertThat(told).containsExactly("old: durable", "slow: durable");
    }

    @Test
    void shouldCoverAppendsMadeDuringAFlightWithTheNextFlushOnly() throws IOException {
        PartitionLog log = open("p-0");
        produce(log, "a");
        shardCycle();

        // Given two more produces while the first flush is in flight
        produce(log, "b");
        produce(log, "c");
        shardCycle();
        assertThat(flusherCycle()).as("one flush in flight per log").isEqualTo(1);

        // When the first completes, only its produce is answered; the others go in one next flush
        shardCycle();
        assertThat(told).containsExactly("a: durable");
        assertThat(log.highWatermark()).isEqualTo(1);
        assertThat(log.flushInFlight()).isTrue();
        assertThat(flusherCycle()).isEqualTo(1);
        shardCycle();
        assertThat(told).containsExactly("a: durable", "b: durable", "c: durable");
        assertThat(log.highWatermark()).isEqualTo(3);
        assertThat(flusherCycle()).isZero();
    }

    @Test
    void shouldLeaveTheFlusherIdleWithoutDurability() throws IOException {
        PartitionLog log = open("p-0", config(Durability.NONE, 1 << 20), FileIO.REAL);

        produce(log, "a");
        shardCycle();

        assertThat(told).containsExactly("a: durable");
        assertThat(flusherCycle()).isZero();
    }

    @Test
    void shouldCompleteAFlushWhoseSegmentIsDeletedWhileItsForceIsInFlight() throws IOException {
        // Given segments written without durability (none forced), then durability switched on
        PartitionLog log = open("p-0", config(Durability.NONE, 200), FileIO.REAL);
        for (int i = 0; i < 4; i++) {
            produce(log, "x".repeat(100) + i); // one batch per segment
        }
        shardCycle();
        told.clear();
        log.updateConfig(config(Durability.DURABLE, 200));
        produce(log, "last");
        shardCycle();
        assertThat(log.flushInFlight()).isTrue();

        // When DeleteRecords removes the old segments on the shard while their force is in flight
        CompletableFuture<Long> deleted = shard.call(() -> log.deleteRecordsBefore(3));
        shardCycle();
        assertThat(deleted).isCompletedWithValue(3L);
        assertThat(log.segmentCount()).isEqualTo(2);
        flusherCycle();
        shardCycle();

        // Then the flush completes for what is left, without a fatal error
        assertThat(fatal).isEmpty();
        assertThat(told).containsExactly("last: durable");
        assertThat(log.highWatermark()).isEqualTo(5);
        assertThat(values(log.read(3, 1 << 20, true).records())).hasSize(2).endsWith("last");
    }

    /** Segment files whose fsync fails (at the step right before it) while {@code failing} is set. */
    private static final class FailingFsync implements FileIO {
        boolean failing;

        @Override
        public FileChannel open(Path path, boolean create) throws IOException {
            return FileIO.REAL.open(path, create);
        }

        @Override
        public void crashPoint(CrashPoint point) throws IOException {
            if (failing && point == CrashPoint.AFTER_APPEND_BEFORE_FSYNC) {
                throw new IOException("injected fsync failure");
            }
        }
    }

    @Test
    void shouldTreatAFailedFsyncAsFatalAndAcknowledgeNothingThatWaitedOnIt() throws IOException {
        FailingFsync io = new FailingFsync();
        PartitionLog broken = open("p-0", config(Durability.DURABLE, 1 << 20), io);
        PartitionLog fine = open("p-1");

        // Given a flush in flight with a produce behind it, and another partition's flush
        io.failing = true;
        produce(broken, "a");
        shardCycle();
        produce(broken, "b");
        produce(fine, "c");
        shardCycle();

        // When the fsync of the first fails
        flusherCycle();
        shardCycle();

        // Then the broker is told, nothing of that log is acknowledged, and it takes no more writes
        assertThat(fatal).containsExactly("flush of a partition log failed");
        assertThat(told).containsExactlyInAnyOrder("a: KAFKA_STORAGE_ERROR", "b: KAFKA_STORAGE_ERROR", "c: durable");
        assertThat(broken.highWatermark()).isZero();
        assertThat(broken.flushInFlight()).isFalse();
        CompletableFuture<Long> refused = shard.call(() -> broken.append(MemoryRecords.withRecords(
                Compression.NONE, new SimpleRecord(T0, null, "d".getBytes(StandardCharsets.UTF_8)))).baseOffset());
        shardCycle();
        assertThat(refused).isCompletedExceptionally();
        assertThat(flusherCycle()).as("never retried").isZero();
    }

    @Test
    void shouldOnCloseAcknowledgeWhatItsStoppedFlusherForcedAndForceTheRestItself() throws IOException {
        PartitionLog log = open("p-0");
        produce(log, "a");
        shardCycle();
        produce(log, "b");
        shardCycle();

        // When the flusher stops first (as a broker stops them), then the shard
        flusher.onClose();
        assertThat(flusher.submit(null, forced -> { })).as("refuses after stopping").isFalse();
        shard.onClose();

        // Then both produces were forced before being acknowledged: "a" by the flusher, "b" here
        assertThat(told).containsExactly("a: durable", "b: durable");
        assertThat(log.highWatermark()).isEqualTo(2);
        assertThat(fatal).isEmpty();
    }

    @Test
    void shouldOnCloseFailWhatWaitsOnAFlushItWillNeverHearOf() throws IOException {
        PartitionLog log = open("p-0");
        produce(log, "a");
        shardCycle();
        produce(log, "b");

        // When the shard stops while its flusher still holds the flush
        shard.onClose();

        // Then neither produce is acknowledged, and the flusher's late completion goes nowhere
        assertThat(told).containsExactly("a: NOT_LEADER_OR_FOLLOWER", "b: NOT_LEADER_OR_FOLLOWER");
        assertThat(flusherCycle()).isEqualTo(1);
        assertThat(told).hasSize(2);
    }

    @Test
    void shouldRunWhatWaitsForADeletedLogOnlyOnceItsFlushIsBack() throws IOException {
        PartitionLog log = open("p-0");
        produce(log, "a");
        shardCycle();
        produce(log, "b");
        List<String> after = new ArrayList<>();

        // When the partition is deleted with a flush in flight and a produce behind it
        shard.execute(() -> shard.retire(log, () -> after.add("files removed")));
        shardCycle();

        // Then the produce behind fails at once, but the files wait for the flush in flight
        assertThat(told).containsExactly("b: UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(after).isEmpty();
        flusherCycle();
        shardCycle();
        assertThat(told).containsExactly("b: UNKNOWN_TOPIC_OR_PARTITION", "a: durable");
        assertThat(after).containsExactly("files removed");
        assertThat(flusherCycle()).isZero();
    }
}
