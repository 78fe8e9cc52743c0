package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pier.state.SharePartitionKey;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * The share engine's acknowledge path on fuzzer-chosen operations: acquisitions by three members,
 * acknowledgement batches with any ranges (inside, across, below and far past the window,
 * overlapping, descending, up to Long.MAX_VALUE), any type lists, lock expiry, member release,
 * start-offset moves, and commits or rollbacks of the pending changes in any order.
 *
 * <p>Input: a config byte, then operations of one opcode byte and its operands; a missing byte
 * reads as 0, and at most {@link #MAX_STEPS} operations run. Kept inputs, in {@code
 * AcknowledgeFuzzTestInputs/acknowledge/}: acquire-then-accept, acks by the wrong member, a
 * range past the window, per-offset type lists, and renew with renewal off.
 */
class AcknowledgeFuzzTest {
    static final int MAX_STEPS = 64;
    private static final int[] BATCH_SIZES = {3, 2, 4, 1, 5, 3, 2};
    private static final String[] MEMBERS = {"m0", "m1", "m2"};
    /** Offsets an operand byte can name: small ones near the window, and the extremes. */
    private static final long[] SPECIAL = {-1, Long.MIN_VALUE, Long.MAX_VALUE, Long.MAX_VALUE - 1, Integer.MAX_VALUE,
        1L << 32, 1_000_000};

    /**
     * Invariant: acknowledge either fails with INVALID_REQUEST or INVALID_RECORD_STATE and changes
     * nothing, or returns a pending change that commits or rolls back; no operation throws or
     * runs away; the start offset never goes back; the records by state add up to those in
     * flight; the records acquired per member add up to those ACQUIRED; and a fetch still
     * acquires afterwards.
     */
    @FuzzTest(maxDuration = "60s")
    void acknowledge(byte[] input) {
        ByteBuffer in = ByteBuffer.wrap(input);
        int cfg = next(in);
        ShareConfig config = new ShareConfig(1_000, 2 + (cfg & 3), 4 + ((cfg >> 2) & 15), (cfg & 64) != 0);
        List<LogBatch> log = new ArrayList<>();
        long end = 0;
        for (int size : BATCH_SIZES) {
            log.add(new LogBatch(end, end + size - 1));
            end += size;
        }
        SharePartition sp = SharePartition.fresh(new SharePartitionKey("g", Uuid.ONE_UUID, 0), 0, 0, () -> config);
        List<PendingChange> outstanding = new ArrayList<>();
        long now = 0;
        long lastStart = sp.startOffset();
        for (int step = 0; step < MAX_STEPS && in.hasRemaining(); step++) {
            int op = next(in) % 7;
            switch (op) {
                case 0 -> acquire(sp, log, MEMBERS[next(in) % 3], next(in), now);
                case 1 -> {
                    String member = MEMBERS[next(in) % 3];
                    List<AckBatch> batches = batches(in);
                    AckResult r = sp.acknowledge(member, batches, now);
                    if (r.isError()) {
                        assertThat(r.error()).as("error for %s", batches)
                                .isIn(Errors.INVALID_REQUEST, Errors.INVALID_RECORD_STATE);
                    } else {
                        outstanding.add(r.pending());
                    }
                }
                case 2 -> {
                    now += 1 + next(in) * 20L;
                    var unused = sp.expireLocks(now);
                }
                case 3 -> sp.releaseMember(MEMBERS[next(in) % 3], now).ifPresent(outstanding::add);
                case 4, 5 -> {
                    if (!outstanding.isEmpty()) {
                        PendingChange c = outstanding.remove(next(in) % outstanding.size());
                        if (op == 4) {
                            sp.commit(c);
                        } else {
                            sp.rollback(c);
                        }
                    }
                }
                default -> sp.onLogStartOffsetMoved(Math.min(end, next(in) % 24));
            }
            assertThat(sp.startOffset()).as("start offset after op %d", op).isGreaterThanOrEqualTo(lastStart);
            lastStart = sp.startOffset();
            checkCounts(sp);
        }
        for (PendingChange c : outstanding) {
            sp.commit(c);
        }
        checkCounts(sp);
        now += 10_000; // every lock expired: what is left in the window is available again
        var unused = sp.expireLocks(now);
        if (sp.startOffset() < end && sp.recordCount(RecordState.AVAILABLE) > 0) {
            assertThat(acquire(sp, log, "late", 100, now)).as("a fetch still acquires").isPositive();
        }
    }

    private static long acquire(SharePartition sp, List<LogBatch> log, String member, int maxRecords, long now) {
        long from = sp.nextFetchOffset();
        List<LogBatch> read = new ArrayList<>();
        for (LogBatch b : log) {
            if (b.lastOffset() >= from) {
                read.add(b);
            }
        }
        AcquireLimits limits = new AcquireLimits(1 + maxRecords % 16, 1 + maxRecords % 5,
                maxRecords % 2 == 0 ? AcquireMode.BATCH_OPTIMIZED : AcquireMode.RECORD_LIMIT);
        return sp.acquire(member, from, read, limits, now).stream().mapToLong(AcquiredRange::recordCount).sum();
    }

    private static List<AckBatch> batches(ByteBuffer in) {
        int n = next(in) % 4;
        List<AckBatch> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long first = offset(next(in));
            long last = offset(next(in));
            int types = next(in) % 8; // 0: none, 1: one for the range, more: one per offset (or not)
            List<AcknowledgeType> list = new ArrayList<>();
            for (int t = 0; t < types; t++) {
                list.add(AcknowledgeType.values()[next(in) % AcknowledgeType.values().length]);
            }
            out.add(new AckBatch(first, last, list));
        }
        return out;
    }

    private static long offset(int b) {
        return b < 232 ? b - 2 : SPECIAL[(b - 232) % SPECIAL.length];
    }

    private static void checkCounts(SharePartition sp) {
        int byState = 0;
        for (RecordState s : RecordState.values()) {
            int c = sp.recordCount(s);
            assertThat(c).as("records %s", s).isNotNegative();
            byState += c;
        }
        assertThat(byState).as("records by state add up to those in flight").isEqualTo(sp.inFlightRecords());
        int byMember = 0;
        for (Map.Entry<String, Integer> e : sp.acquiredByMember().entrySet()) {
            byMember += e.getValue();
        }
        assertThat(byMember).as("acquired by member").isEqualTo(sp.recordCount(RecordState.ACQUIRED));
        assertThat(sp.nextFetchOffset()).isGreaterThanOrEqualTo(sp.startOffset());
    }

    private static int next(ByteBuffer in) {
        return in.hasRemaining() ? in.get() & 0xff : 0;
    }
}
