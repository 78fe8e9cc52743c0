package io.pier.bench.jmh;

import io.pier.share.AckBatch;
import io.pier.share.AckResult;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.share.AcquiredRange;
import io.pier.share.LogBatch;
import io.pier.share.ShareConfig;
import io.pier.share.SharePartition;
import io.pier.state.ShareStateWrite;
import io.pier.state.SharePartitionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The share-partition engine alone, without network, log or persister: what one shard thread can
 * do per record at best. Scores are nanoseconds per record (per expiry scan for the lock
 * benchmarks).
 *
 * <ul>
 *   <li>{@code acquireAcceptInOrder}: acquire a 500-record fetch (ten 50-record log batches),
 *       accept it as one contiguous range (what the client sends for in-order per-record ACCEPTs),
 *       commit; the window slides forward every time.
 *   <li>{@code acquireAcceptFragmented}: acquire 500, accept the even offsets (250 one-record
 *       batches, holes everywhere, the start offset cannot move), commit, then the odd ones.
 *   <li>{@code lockExpiryScan}: 2000 acquired records under 200 locks all expire in one call.
 *   <li>{@code lockExpiryNothingDue}: the same window, nothing due: the per-tick cost.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SharePartitionBench {
    static final int FETCH = 500;
    static final int LOG_BATCH = 50;
    static final SharePartitionKey KEY = new SharePartitionKey("bench", new Uuid(1L, 2L), 0);
    static final ShareConfig CONFIG = new ShareConfig(30_000L, 5, 2000, true);
    static final AcquireLimits LIMITS = new AcquireLimits(FETCH, FETCH, AcquireMode.BATCH_OPTIMIZED);

    static List<LogBatch> logRead(long from, int records, int batchSize) {
        List<LogBatch> out = new ArrayList<>(records / batchSize + 1);
        for (long o = from; o < from + records; o += batchSize) {
            out.add(new LogBatch(o, Math.min(o + batchSize, from + records) - 1));
        }
        return out;
    }

    static void settle(SharePartition sp, String member, List<AckBatch> acks, long now) {
        AckResult r = sp.acknowledge(member, acks, now);
        if (r.isError()) {
            throw new IllegalStateException("ack failed: " + r.error());
        }
        sp.commit(r.pending());
    }

    @State(Scope.Thread)
    public static class Flow {
        SharePartition sp;
        long now;

        @Setup(Level.Trial)
        public void setUp() {
            sp = SharePartition.fresh(KEY, 0, 0, () -> CONFIG);
            now = 1;
        }

        List<AcquiredRange> fetch(String member) {
            long from = sp.nextFetchOffset();
            return sp.acquire(member, from, logRead(from, FETCH, LOG_BATCH), LIMITS, ++now);
        }
    }

    @Benchmark
    @OperationsPerInvocation(FETCH)
    public void acquireAcceptInOrder(Flow f, Blackhole bh) {
        List<AcquiredRange> got = f.fetch("m1");
        AcquiredRange first = got.get(0);
        AcquiredRange last = got.get(got.size() - 1);
        settle(f.sp, "m1", List.of(AckBatch.of(first.firstOffset(), last.lastOffset(), AcknowledgeType.ACCEPT)), f.now);
        bh.consume(f.sp.nextDeadlineMs());
    }

    @Benchmark
    @OperationsPerInvocation(FETCH)
    public void acquireAcceptFragmented(Flow f, Blackhole bh) {
        List<AcquiredRange> got = f.fetch("m1");
        long from = got.get(0).firstOffset();
        long to = got.get(got.size() - 1).lastOffset();
        List<AckBatch> even = new ArrayList<>(FETCH / 2 + 1);
        List<AckBatch> odd = new ArrayList<>(FETCH / 2 + 1);
        for (long o = from; o <= to; o++) {
            ((o - from) % 2 == 0 ? even : odd).add(AckBatch.of(o, o, AcknowledgeType.ACCEPT));
        }
        settle(f.sp, "m1", even, f.now);
        bh.consume(f.sp.startOffset());
        settle(f.sp, "m1", odd, f.now);
        bh.consume(f.sp.nextDeadlineMs());
    }

    @State(Scope.Thread)
    public static class Locked {
        static final int RECORDS = 2000;
        static final int PER_LOCK = 10;
        SharePartition sp;

        @Setup(Level.Invocation)
        public void setUp() {
            sp = lockedWindow();
        }

        static SharePartition lockedWindow() {
            SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> CONFIG);
            AcquireLimits limits = new AcquireLimits(PER_LOCK, PER_LOCK, AcquireMode.RECORD_LIMIT);
            for (int i = 0; i < RECORDS / PER_LOCK; i++) {
                long from = sp.nextFetchOffset();
                sp.acquire("m" + (i % 4), from, logRead(from, PER_LOCK, PER_LOCK), limits, i);
            }
            return sp;
        }
    }

    @Benchmark
    public Optional<ShareStateWrite> lockExpiryScan(Locked l) {
        Optional<ShareStateWrite> w = l.sp.expireLocks(CONFIG.lockDurationMs() + Locked.RECORDS);
        if (w.isEmpty()) {
            throw new IllegalStateException("nothing expired");
        }
        return w;
    }

    /** The same window, built once: nothing is ever due. */
    @State(Scope.Thread)
    public static class LockedOnce {
        SharePartition sp;

        @Setup(Level.Trial)
        public void setUp() {
            sp = Locked.lockedWindow();
        }
    }

    @Benchmark
    public Optional<ShareStateWrite> lockExpiryNothingDue(LockedOnce l) {
        return l.sp.expireLocks(Locked.RECORDS);
    }
}
