package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualAgentRunner;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.CrashPoint;
import io.pier.log.Durability;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import io.pier.log.PowerLossFileIO;
import io.pier.share.AckBatch;
import io.pier.share.AckResult;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.share.AcquiredRange;
import io.pier.share.LogBatch;
import io.pier.share.PendingChange;
import io.pier.share.ShareConfig;
import io.pier.share.SharePartition;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Simulated power loss, many times over: a topic log and the share state of one share-partition
 * (the engine plus the durable persister, persisting acquisitions) run random acquire / ACCEPT /
 * RELEASE / REJECT / lock-expiry steps with writes left in flight; then the power goes out (all
 * unsynced bytes dropped, the last write possibly torn), either at a random step or at an armed
 * {@link CrashPoint}; then everything is reopened from disk. An oracle of what was confirmed
 * checks, after every restart and at every delivery: nothing confirmed is lost, an accepted offset
 * is never delivered again, no offset changes its final value, the delivery count a consumer sees
 * only grows and never exceeds the limit, and the state never names offsets past the durable log
 * end. A last phase without faults checks that every record still reaches a final state.
 *
 * <p>No thread runs the persister: the test runs its duty cycles by hand, at random points between
 * steps, so writes really are in flight when the power goes, and a seed repeats a run exactly. The
 * seed is printed; {@code -Dpier.powerloss.seed=N} repeats a run.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SharePowerLossTest {
    private static final int CYCLES = 60;
    private static final int MAX_STEPS = 80;
    private static final int LIMIT = 4;
    private static final long LOCK_MS = 1_000;
    private static final int TARGET_RECORDS = 1_500;
    private static final SharePartitionKey KEY = new SharePartitionKey("g", new Uuid(3L, 4L), 0);
    private static final ShareConfig CONFIG = new ShareConfig(LOCK_MS, LIMIT, 200, true);
    private static final String[] MEMBERS = {"m1", "m2"};
    private static final CrashPoint[] POINTS = CrashPoint.values();

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);
    private Random random;
    // Oracle, per offset.
    private final short[] maxDelivered = new short[TARGET_RECORDS + 200];
    private final byte[] confirmedFinal = new byte[TARGET_RECORDS + 200]; // 0, or the state id
    private final byte[] seenFinal = new byte[TARGET_RECORDS + 200];
    private long confirmedStart;
    private int deliveries;
    private int redeliveries;
    private int confirmedAcks;
    private int crashesAtPoints;
    private long bytesDropped;

    private PowerLossFileIO io;
    private PartitionLog topic;
    private DurableSharePersister persister;
    private ManualAgentRunner runner;
    private SharePartition sp;
    private final List<Held> held = new ArrayList<>();
    private final List<InFlight> inFlight = new ArrayList<>();

    private record Held(String member, long first, long last) {}

    private record InFlight(CompletableFuture<Void> future, PendingChange change, long first, long last,
            AcknowledgeType type, short count) {}

    @Test
    void shouldKeepEveryConfirmedShareStateChangeAcrossSimulatedPowerLoss() throws Exception {
        long seed = Long.getLong("pier.powerloss.seed", System.nanoTime());
        System.out.printf("SharePowerLossTest seed %d%n", seed);
        random = new Random(seed);
        for (int cycle = 1; cycle <= CYCLES; cycle++) {
            io = new PowerLossFileIO();
            start(io);
            // three cycles in four armed, and the rest lose power at a random step. An armed cycle
            // runs all its steps, so that its point comes: with a random number of steps a seed
            // (38705640093346) reached only 5 of 45 armed points.
            boolean armed = random.nextInt(4) != 0;
            if (armed) {
                io.arm(POINTS[random.nextInt(POINTS.length)], 1 + random.nextInt(4));
            }
            int randomSteps = 1 + random.nextInt(MAX_STEPS);
            int steps = armed ? MAX_STEPS : randomSteps;
            for (int s = 0; s < steps && !io.crashed(); s++) {
                try {
                    step();
                } catch (PowerLossFileIO.SimulatedCrash e) {
                    break;
                }
            }
            crashesAtPoints += io.crashed() ? 1 : 0;
            if (!io.crashed()) {
                // pull the plug while acknowledgements and lock expiries are still being written
                for (int i = random.nextInt(4); i > 0; i--) {
                    acknowledge(false);
                }
                clock.advance(random.nextInt((int) LOCK_MS));
                expire();
                if (random.nextBoolean()) {
                    runner.cycle(); // some of them made it to disk, some did not
                }
            }
            bytesDropped += io.powerLoss(random);
            stopAfterCrash();
        }

        // Then, with no more faults, every record reaches a final state and the oracle still holds
        start(FileIO.REAL);
        for (int round = 0; round < 10_000 && sp.startOffset() < topic.highWatermark(); round++) {
            settleEverything();
        }
        assertThat(sp.startOffset()).as("all records settled").isEqualTo(topic.highWatermark());
        runner.close();
        topic.close();
        System.out.printf("SharePowerLossTest: %d cycles (%d at crash points), %d deliveries, %d redeliveries, "
                + "%d confirmed acks, %d unsynced bytes dropped%n", CYCLES, crashesAtPoints, deliveries,
                redeliveries, confirmedAcks, bytesDropped);
        assertThat(confirmedAcks).isGreaterThan(100);
        assertThat(crashesAtPoints).isGreaterThan(5);
    }

    private void start(FileIO fileIO) throws Exception {
        LogConfig topicConfig = new LogConfig(8 * 1024, Long.MAX_VALUE, -1, -1, 1 << 20, 1024, false,
                Durability.DURABLE);
        topic = PartitionLog.open(dir.resolve("topic"), topicConfig, clock, fileIO);
        persister = DurableSharePersister.open(dir.resolve("share-state"),
                new DurableSharePersister.Options(7, Long.MAX_VALUE / 4, 2048), clock, fileIO, Wakeup.NONE,
                (what, cause) -> { });
        runner = new ManualAgentRunner(persister, clock);
        ShareState state = persister.read(KEY);
        checkDurableState(state);
        if (state == null) {
            runner.await(persister.initialize(KEY, 0));
            sp = SharePartition.fresh(KEY, persister.read(KEY).stateEpoch(), 0, () -> CONFIG);
        } else {
            sp = SharePartition.load(KEY, state, () -> CONFIG);
        }
        held.clear();
        inFlight.clear();
    }

    /** What is on disk must agree with everything that was confirmed. */
    private void checkDurableState(ShareState state) {
        long hw = topic.highWatermark();
        if (state == null) {
            assertThat(confirmedAcks).as("state vanished").isZero();
            return;
        }
        assertThat(state.startOffset()).as("start offset never goes back").isGreaterThanOrEqualTo(confirmedStart);
        confirmedStart = state.startOffset();
        long prevLast = state.startOffset() - 1;
        for (PersistedBatch b : state.batches()) {
            assertThat(b.firstOffset()).as("sorted, disjoint batches: one value per offset").isGreaterThan(prevLast);
            assertThat(b.lastOffset()).as("O1: state within the durable log").isLessThan(hw);
            assertThat((int) b.deliveryCount()).isLessThanOrEqualTo(LIMIT);
            prevLast = b.lastOffset();
        }
        for (int o = (int) state.startOffset(); o < hw && o < maxDelivered.length; o++) {
            PersistedBatch b = batchAt(state, o);
            byte st = b == null ? PersistedBatch.AVAILABLE : b.state();
            short count = b == null ? 0 : b.deliveryCount();
            assertThat(count).as("delivery count of %d never decreases", o).isGreaterThanOrEqualTo(maxDelivered[o]);
            if (confirmedFinal[o] != 0) {
                assertThat(st).as("confirmed final state of %d", o).isEqualTo(confirmedFinal[o]);
            }
            if (seenFinal[o] != 0) {
                assertThat(st).as("final state of %d never changes", o).isEqualTo(seenFinal[o]);
            }
            if (st != PersistedBatch.AVAILABLE) {
                seenFinal[o] = st;
            }
        }
    }

    private static PersistedBatch batchAt(ShareState state, long offset) {
        for (PersistedBatch b : state.batches()) {
            if (b.firstOffset() <= offset && offset <= b.lastOffset()) {
                return b;
            }
        }
        return null;
    }

    private void step() throws Exception {
        if (random.nextInt(3) != 0) {
            runner.cycle(); // writes submitted since the last cycle become durable together
            if (io.crashed()) {
                return; // an armed crash point went off inside the persister's cycle
            }
        }
        resolveCompleted(false);
        int action = random.nextInt(10);
        if (action < 4) {
            acquire(MEMBERS[random.nextInt(MEMBERS.length)]);
        } else if (action < 8) {
            acknowledge(random.nextInt(4) != 0);
        } else if (action < 9) {
            clock.advance(LOCK_MS / 2 + random.nextInt((int) LOCK_MS));
            expire();
        } else {
            produce();
        }
    }

    private void produce() throws IOException {
        long end = topic.logEndOffset();
        if (end >= TARGET_RECORDS) {
            return;
        }
        int n = 1 + random.nextInt(30);
        SimpleRecord[] records = new SimpleRecord[(int) Math.min(n, TARGET_RECORDS - end)];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(clock.wallMs(), null, ("v" + (end + i)).getBytes());
        }
        topic.append(MemoryRecords.withRecords(Compression.NONE, records));
        topic.flush();
    }

    private void acquire(String member) throws Exception {
        long fetch = sp.nextFetchOffset();
        long hw = topic.highWatermark();
        if (fetch >= hw) {
            produce();
            return;
        }
        List<LogBatch> batches = new ArrayList<>();
        for (RecordBatch b : topic.read(fetch, 16 * 1024, true).records().batches()) {
            batches.add(new LogBatch(b.baseOffset(), b.lastOffset()));
        }
        List<AcquiredRange> ranges = sp.acquire(member, fetch, batches,
                new AcquireLimits(1 + random.nextInt(40), 10, AcquireMode.BATCH_OPTIMIZED), clock.monoMs());
        if (ranges.isEmpty()) {
            return;
        }
        List<PersistedBatch> write = new ArrayList<>();
        for (AcquiredRange r : ranges) {
            write.add(new PersistedBatch(r.firstOffset(), r.lastOffset(), PersistedBatch.AVAILABLE, r.deliveryCount()));
        }
        // Durable delivery counts: the records go out only once their new count is on disk.
        if (!await(persister.write(new ShareStateWrite(KEY, sp.stateEpoch(), -1, write)))) {
            return;
        }
        for (AcquiredRange r : ranges) {
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                int i = (int) o;
                assertThat((int) r.deliveryCount()).as("delivery count of %d within the limit", o)
                        .isLessThanOrEqualTo(LIMIT);
                assertThat(confirmedFinal[i]).as("offset %d delivered after a confirmed final state", o).isZero();
                assertThat(r.deliveryCount()).as("count seen for %d grows", o).isGreaterThan(maxDelivered[i]);
                redeliveries += maxDelivered[i] > 0 ? 1 : 0;
                maxDelivered[i] = r.deliveryCount();
                deliveries++;
            }
            held.add(new Held(member, r.firstOffset(), r.lastOffset()));
        }
    }

    private void acknowledge(boolean wait) throws Exception {
        if (held.isEmpty()) {
            return;
        }
        Held h = held.remove(random.nextInt(held.size()));
        int pick = random.nextInt(10);
        AcknowledgeType type = pick < 6 ? AcknowledgeType.ACCEPT : pick < 9 ? AcknowledgeType.RELEASE
                : AcknowledgeType.REJECT;
        AckResult result = sp.acknowledge(h.member(), List.of(AckBatch.of(h.first(), h.last(), type)), clock.monoMs());
        if (result.isError() || result.pending().write().isEmpty()) {
            if (!result.isError()) {
                sp.commit(result.pending());
            }
            return;
        }
        PendingChange change = result.pending();
        ShareStateWrite write = change.write().get();
        short count = write.batches().get(0).deliveryCount();
        inFlight.add(new InFlight(persister.write(write), change, h.first(), h.last(), type, count));
        if (wait) {
            resolveCompleted(true);
        }
    }

    private void expire() {
        // Not awaited: a power cut may fail the write, and what reached the disk is what is checked.
        sp.expireLocks(clock.monoMs()).ifPresent(w -> {
            var unused = persister.write(w);
        });
    }

    /** Commits or rolls back acknowledgements whose write finished (all of them if {@code all}). */
    private void resolveCompleted(boolean all) throws Exception {
        for (int i = 0; i < inFlight.size(); i++) {
            InFlight f = inFlight.get(i);
            if (!all && !f.future().isDone()) {
                continue;
            }
            inFlight.remove(i--);
            if (await(f.future())) {
                sp.commit(f.change());
                confirm(f);
            } else {
                sp.rollback(f.change());
            }
        }
    }

    private void confirm(InFlight f) {
        byte target = switch (f.type()) {
            case ACCEPT -> PersistedBatch.ACKNOWLEDGED;
            case REJECT -> PersistedBatch.ARCHIVED;
            default -> f.count() >= LIMIT ? PersistedBatch.ARCHIVED : 0;
        };
        if (target != 0) {
            for (long o = f.first(); o <= f.last(); o++) {
                if (o >= sp.startOffset() || confirmedFinal[(int) o] == 0) {
                    confirmedFinal[(int) o] = target;
                }
            }
        }
        confirmedAcks++;
    }

    /** Runs the persister's cycles until {@code f} is done; true if it succeeded. */
    private boolean await(CompletableFuture<Void> f) {
        try {
            runner.await(f);
            return true;
        } catch (ExecutionException e) {
            return false;
        }
    }

    /** After the power went out: let the persister fail what it still held, note what did complete. */
    private void stopAfterCrash() throws Exception {
        resolveCompleted(true);
        runner.close();
        try {
            topic.close();
        } catch (RuntimeException expected) {
            // the files are gone from under it
        }
    }

    private void settleEverything() throws Exception {
        resolveCompleted(true);
        produce();
        acquire(MEMBERS[0]);
        for (Held h : new ArrayList<>(held)) {
            held.remove(h);
            AckResult r = sp.acknowledge(h.member(), List.of(AckBatch.of(h.first(), h.last(), AcknowledgeType.ACCEPT)),
                    clock.monoMs());
            if (!r.isError()) {
                CompletableFuture<Void> done = r.pending().write().map(persister::write)
                        .orElse(CompletableFuture.completedFuture(null));
                inFlight.add(new InFlight(done, r.pending(), h.first(), h.last(), AcknowledgeType.ACCEPT,
                        (short) 0));
            }
        }
        resolveCompleted(true);
        clock.advance(LOCK_MS + 1);
        expire();
    }
}
