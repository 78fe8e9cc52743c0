package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualAgentRunner;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.CrashPoint;
import io.pier.log.FileIO;
import io.pier.log.PowerLossFileIO;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persister driven by hand: no thread runs it, each duty cycle is a {@code doWork} call at the
 * time of a manual clock, so every test is deterministic and none waits.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DurableSharePersisterTest {
    private static final Uuid TOPIC = new Uuid(7L, 9L);
    private static final SharePartitionKey KEY = new SharePartitionKey("g", TOPIC, 0);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);
    private final List<String> fatal = new CopyOnWriteArrayList<>();
    private DurableSharePersister persister;
    private ManualAgentRunner runner;

    @AfterEach
    void closePersister() {
        if (persister != null) {
            persister.close();
        }
    }

    private DurableSharePersister open(DurableSharePersister.Options options, FileIO io) throws IOException {
        return open(options, io, Wakeup.NONE);
    }

    private DurableSharePersister open(DurableSharePersister.Options options, FileIO io, Wakeup wakeup)
            throws IOException {
        if (persister != null) {
            persister.close();
        }
        persister = DurableSharePersister.open(dir, options, clock, io, wakeup, (what, cause) -> fatal.add(what));
        runner = new ManualAgentRunner(persister, clock);
        return persister;
    }

    private <T> T await(CompletableFuture<T> future) throws ExecutionException {
        return runner.await(future);
    }

    private static PersistedBatch b(long first, long last, byte state, int count) {
        return new PersistedBatch(first, last, state, (short) count);
    }

    @Test
    void shouldReplayTheSameStateAsTheInMemoryPersisterAfterReopen() throws Exception {
        // Given random writes to several keys, mirrored into the in-memory reference
        long seed = System.nanoTime();
        System.out.println("DurableSharePersisterTest seed " + seed);
        Random random = new Random(seed);
        InMemorySharePersister reference = new InMemorySharePersister();
        open(new DurableSharePersister.Options(5, 1_000_000, 4096), FileIO.REAL);
        List<SharePartitionKey> keys = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            keys.add(new SharePartitionKey("group-" + (p % 2), TOPIC, p));
        }
        for (SharePartitionKey k : keys) {
            await(persister.initialize(k, 0));
            reference.initialize(k, 0).get();
        }
        long[] start = new long[keys.size()];
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            int p = random.nextInt(keys.size());
            start[p] += random.nextInt(3);
            long first = start[p] + random.nextInt(20);
            byte state = new byte[] {PersistedBatch.AVAILABLE, PersistedBatch.ACKNOWLEDGED, PersistedBatch.ARCHIVED}[
                    random.nextInt(3)];
            ShareStateWrite w = new ShareStateWrite(keys.get(p), 0, start[p],
                    List.of(b(first, first + random.nextInt(10), state, 1 + random.nextInt(4))));
            pending.add(persister.write(w));
            reference.write(w).get();
        }
        await(persister.delete(keys.get(3)));
        reference.delete(keys.get(3)).get();
        await(persister.recordGroup("group-0"));
        for (CompletableFuture<Void> f : pending) {
            await(f);
        }
        assertThat(persister.recordsAppended()).isGreaterThan(400);
        assertThat(persister.flushes()).isLessThanOrEqualTo(persister.recordsAppended());

        // When it is reopened
        open(new DurableSharePersister.Options(5, 1_000_000, 4096), FileIO.REAL);

        // Then every key reads back exactly as the reference merged it
        for (SharePartitionKey k : keys) {
            assertThat(persister.read(k)).as("%s", k).isEqualTo(reference.read(k));
        }
        assertThat(persister.groups()).containsExactly("group-0");
    }

    @Test
    void shouldCleanAwaySupersededRecordsAndStillReplayTheSameState() throws Exception {
        // Given one hot key (snapshotted every 3 updates) and one cold key, over many small segments
        DurableSharePersister.Options options = new DurableSharePersister.Options(3, 1_000_000, 1024);
        open(options, FileIO.REAL);
        SharePartitionKey cold = new SharePartitionKey("cold", TOPIC, 1);
        await(persister.initialize(cold, 0));
        await(persister.write(new ShareStateWrite(cold, 0, 0, List.of(b(0, 4, PersistedBatch.ACKNOWLEDGED, 1)))));
        await(persister.initialize(KEY, 0));
        for (int i = 0; i < 200; i++) {
            await(persister.write(new ShareStateWrite(KEY, 0, i, List.of(b(i, i, PersistedBatch.ACKNOWLEDGED, 1)))));
        }
        ShareState hot = persister.read(KEY);
        ShareState coldState = persister.read(cold);
        long segmentsBefore = countSegments();

        // When two cold passes run: the first notes the end, the second snapshots what is older
        await(persister.compactNow());
        assertThat(persister.logStartOffset()).as("the cold key pins the start").isLessThanOrEqualTo(2);
        await(persister.compactNow());

        // Then the log start moved past the superseded records, segments were deleted
        assertThat(persister.logStartOffset()).isGreaterThan(150);
        assertThat(countSegments()).isLessThan(segmentsBefore);
        open(options, FileIO.REAL);
        assertThat(persister.read(KEY)).isEqualTo(hot);
        assertThat(persister.read(cold)).isEqualTo(coldState);
        assertThat(hot.startOffset()).isEqualTo(199);
    }

    @Test
    void shouldSnapshotColdKeysExactlyWhenTheClockPassesTheIntervalWithNoThreadRunning() throws Exception {
        // Given a cold key and a hot key over many small segments, a 60 s cold interval, and the
        // first cycle run at t0 (it starts the interval)
        DurableSharePersister.Options options = new DurableSharePersister.Options(3, 60_000, 1024);
        open(options, FileIO.REAL);
        long t0 = clock.monoMs();
        SharePartitionKey cold = new SharePartitionKey("cold", TOPIC, 1);
        await(persister.initialize(cold, 0));
        await(persister.write(new ShareStateWrite(cold, 0, 0, List.of(b(0, 4, PersistedBatch.ACKNOWLEDGED, 1)))));
        await(persister.initialize(KEY, 0));
        for (int i = 0; i < 200; i++) {
            await(persister.write(new ShareStateWrite(KEY, 0, i, List.of(b(i, i, PersistedBatch.ACKNOWLEDGED, 1)))));
        }
        assertThat(persister.nextDeadlineMs()).isEqualTo(t0 + 60_000);
        long records = persister.recordsAppended();
        long segments = countSegments();

        // When the clock reaches the first deadline, that pass only notes where the log ends
        clock.advance(59_999);
        assertThat(runner.cycle()).as("one ms early: idle").isZero();
        clock.advance(1);
        assertThat(runner.cycle()).as("the first cold pass").isEqualTo(1);
        assertThat(persister.recordsAppended()).isEqualTo(records);
        assertThat(persister.logStartOffset()).as("the cold key's snapshot pins the start").isZero();
        assertThat(persister.nextDeadlineMs()).isEqualTo(t0 + 120_000);

        // Then the second pass, exactly at the next deadline, snapshots both keys in the same flush
        // as a write that arrived meanwhile, and moves the start
        clock.advance(59_999);
        assertThat(runner.cycle()).isZero();
        assertThat(persister.recordsAppended()).isEqualTo(records);
        clock.advance(1);
        long flushes = persister.flushes();
        CompletableFuture<Void> write = persister.write(new ShareStateWrite(KEY, 0, 200,
                List.of(b(200, 200, PersistedBatch.ARCHIVED, 2))));
        assertThat(runner.cycle()).as("the write and the second cold pass").isEqualTo(2);
        assertThat(write).isCompleted();
        assertThat(persister.flushes()).as("one flush per cycle").isEqualTo(flushes + 1);
        assertThat(persister.recordsAppended()).as("one snapshot per key, then the write").isEqualTo(records + 3);
        assertThat(persister.read(KEY).batches()).contains(b(200, 200, PersistedBatch.ARCHIVED, 2));
        assertThat(persister.logStartOffset()).isGreaterThan(150);
        assertThat(countSegments()).isLessThan(segments);
        assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
                .as("nothing but this test ran the persister").doesNotContain(persister.roleName());
        ShareState hot = persister.read(KEY);
        ShareState coldState = persister.read(cold);
        open(options, FileIO.REAL);
        assertThat(persister.read(KEY)).isEqualTo(hot);
        assertThat(persister.read(cold)).isEqualTo(coldState);
    }

    @Test
    void shouldWriteWhatArrivedBeforeACycleWithOneFlushAndWakeTheRunnerPerSubmission() throws Exception {
        // Given a persister whose runner counts wake-ups
        AtomicInteger wakeups = new AtomicInteger();
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL, wakeups::incrementAndGet);
        await(persister.initialize(KEY, 0));
        long flushes = persister.flushes();

        // When more writes arrive than one cycle takes
        int n = DurableSharePersister.MAX_SUBMISSIONS_PER_CYCLE + 10;
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            writes.add(persister.write(new ShareStateWrite(KEY, 0, i,
                    List.of(b(i, i, PersistedBatch.ACKNOWLEDGED, 1)))));
        }
        assertThat(wakeups).hasValue(1 + n);
        assertThat(writes).as("nothing happens without a cycle").noneMatch(CompletableFuture::isDone);

        // Then the first cycle takes a bounded batch with one flush, the next one the rest
        assertThat(runner.cycle()).isEqualTo(DurableSharePersister.MAX_SUBMISSIONS_PER_CYCLE);
        assertThat(persister.flushes()).isEqualTo(flushes + 1);
        assertThat(writes.get(DurableSharePersister.MAX_SUBMISSIONS_PER_CYCLE - 1)).isCompleted();
        assertThat(writes.get(DurableSharePersister.MAX_SUBMISSIONS_PER_CYCLE)).isNotDone();
        assertThat(runner.cycle()).isEqualTo(10);
        assertThat(persister.flushes()).isEqualTo(flushes + 2);
        assertThat(writes).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
        assertThat(persister.read(KEY).startOffset()).isEqualTo(n - 1);
        assertThat(runner.cycle()).as("idle").isZero();
    }

    @Test
    void shouldWriteWhatWasSubmittedBeforeCloseAndRefuseWhatComesAfter() throws Exception {
        // Given a write submitted but not yet written
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        await(persister.initialize(KEY, 0));
        CompletableFuture<Void> queued = persister.write(new ShareStateWrite(KEY, 0, 3, List.of()));

        // When the persister closes
        runner.close();

        // Then the queued write is durable and later ones fail at once
        assertThat(queued).isCompleted();
        assertThat(persister.write(new ShareStateWrite(KEY, 0, 4, List.of()))).isCompletedExceptionally();
        assertThat(runner.cycle()).isZero();
        persister = null;
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        assertThat(persister.read(KEY).startOffset()).isEqualTo(3);
    }

    private long countSegments() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".log")).count();
        }
    }

    @Test
    void shouldRefuseUninitialisedKeysAndFencedEpochs() throws Exception {
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        assertThatThrownBy(() -> await(persister.write(new ShareStateWrite(KEY, 0, 0, List.of()))))
                .isInstanceOf(ExecutionException.class).hasMessageContaining("not initialised");
        await(persister.initialize(KEY, 5));
        await(persister.initialize(KEY, 7));
        assertThat(persister.read(KEY)).isEqualTo(new ShareState(1, 7, List.of()));
        assertThatThrownBy(() -> await(persister.write(new ShareStateWrite(KEY, 0, 8, List.of()))))
                .hasMessageContaining("fenced");
        assertThat(persister.read(KEY).startOffset()).isEqualTo(7);
        assertThat(fatal).isEmpty();
    }

    @Test
    void shouldDropATornFinalRecordButRefuseCorruptionInsideTheSyncedRegion() throws Exception {
        // Given two durable writes
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        await(persister.initialize(KEY, 0));
        await(persister.write(new ShareStateWrite(KEY, 0, 0, List.of(b(0, 3, PersistedBatch.ACKNOWLEDGED, 1)))));
        ShareState before = persister.read(KEY);
        persister.close();
        persister = null;
        Path segment = dir.resolve("00000000000000000000.log");
        long synced = Files.size(segment);

        // When a torn half record follows them, it is dropped on open
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.seek(synced);
            f.write(new byte[] {0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 90, 1, 2, 3});
        }
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        assertThat(persister.read(KEY)).isEqualTo(before);
        assertThat(Files.size(segment)).isEqualTo(synced);
        persister.close();
        persister = null;

        // When a byte inside the synced region flips, opening fails naming the file
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.seek(synced - 5);
            int v = f.read();
            f.seek(synced - 5);
            f.write(v ^ 0x40);
        }
        assertThatThrownBy(() -> DurableSharePersister.open(dir, DurableSharePersister.Options.DEFAULTS, clock,
                FileIO.REAL, Wakeup.NONE, (what, cause) -> { }))
                .isInstanceOf(IOException.class).hasMessageContaining("00000000000000000000.log");
    }

    @Test
    void shouldFailEveryWriteAndReportOnceWhenTheStateLogCannotBeForced() throws Exception {
        // Given a persister whose next fsync will not happen
        PowerLossFileIO io = new PowerLossFileIO();
        open(DurableSharePersister.Options.DEFAULTS, io);
        await(persister.initialize(KEY, 0));
        io.arm(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 1);

        // When a write hits it
        CompletableFuture<Void> w = persister.write(new ShareStateWrite(KEY, 0, 0,
                List.of(b(0, 0, PersistedBatch.ACKNOWLEDGED, 1))));

        // Then it fails, so do later writes, the state stays as it was and the owner is told once
        assertThatThrownBy(() -> await(w)).isInstanceOf(ExecutionException.class);
        CompletableFuture<Void> later = persister.write(new ShareStateWrite(KEY, 0, 0, List.of()));
        assertThat(later).as("refused without a cycle").isCompletedExceptionally();
        assertThat(persister.nextDeadlineMs()).as("no cold pass on a failed log").isEqualTo(Long.MAX_VALUE);
        assertThat(persister.read(KEY)).isEqualTo(new ShareState(0, 0, List.of()));
        assertThat(fatal).hasSize(1);
        io.powerLoss(null);
        persister.close();
        persister = null;
        open(DurableSharePersister.Options.DEFAULTS, FileIO.REAL);
        assertThat(persister.read(KEY)).isEqualTo(new ShareState(0, 0, List.of()));
    }

    /** A local log that, like the upstream's, leaves work open after a flush of records until a flush with none. */
    private static final class SyncingLog implements ShareStateLog {
        private final ShareStateLog log;
        private boolean appended;
        private boolean open;
        int syncs;

        SyncingLog(ShareStateLog log) {
            this.log = log;
        }

        @Override
        public long append(List<Entry> entries) throws IOException {
            appended = true;
            return log.append(entries);
        }

        @Override
        public void flush() throws IOException {
            log.flush();
            if (!appended) {
                syncs++;
            }
            open = appended;
            appended = false;
        }

        @Override
        public long syncWithinMs() {
            return open ? 50 : Long.MAX_VALUE;
        }

        @Override
        public void replay(Visitor visitor) throws IOException {
            log.replay(visitor);
        }

        @Override
        public long startOffset() {
            return log.startOffset();
        }

        @Override
        public long endOffset() {
            return log.endOffset();
        }

        @Override
        public boolean reclaimable() {
            return log.reclaimable();
        }

        @Override
        public void moveStart(long offset) throws IOException {
            log.moveStart(offset);
        }

        @Override
        public String name() {
            return log.name();
        }

        @Override
        public void close() {
            log.close();
        }
    }

    @Test
    void shouldFlushTheLogAgainWithNothingNewOnceTheSyncItAskedForIsDue() throws Exception {
        // Given a persister over a log that asks for a sync within 50 ms of a flush of records
        SyncingLog log = new SyncingLog(LocalShareStateLog.open(dir, 1 << 20, clock, FileIO.REAL));
        persister = DurableSharePersister.open(log, DurableSharePersister.Options.DEFAULTS, Wakeup.NONE,
                (what, cause) -> fatal.add(what));
        runner = new ManualAgentRunner(persister, clock);

        // When a write is flushed
        await(persister.initialize(KEY, 0));
        runner.runUntilIdle();

        // Then the persister's next deadline is the sync, which does not run before its time
        long flushedAtMs = clock.monoMs();
        assertThat(persister.nextDeadlineMs()).isEqualTo(flushedAtMs + 50);
        clock.advance(49);
        runner.runUntilIdle();
        assertThat(log.syncs).isZero();

        // and runs once when it is due, after which nothing waits on the log any more
        clock.advance(1);
        runner.runUntilIdle();
        assertThat(log.syncs).isEqualTo(1);
        assertThat(persister.nextDeadlineMs()).isGreaterThan(flushedAtMs + 50);
        clock.advance(1_000);
        runner.runUntilIdle();
        assertThat(log.syncs).isEqualTo(1);
        assertThat(fatal).isEmpty();
    }
}
