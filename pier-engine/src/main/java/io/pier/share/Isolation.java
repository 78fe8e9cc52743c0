package io.pier.share;

import io.pier.log.AbortedTransaction;
import java.util.List;
import java.util.Objects;

/**
 * What of a log read a share-partition may acquire, by its group's {@code share.isolation.level}
 * (KIP-932): under read_uncommitted everything the server read (up to the high watermark); under
 * read_committed only batches below the last stable offset, and of those not the data batches of
 * aborted transactions, whose offsets are archived without a delivery instead.
 *
 * <pre>
 *   log:  [ P1 data ][ P2 data ][ P1 ABORT ][ P2 COMMIT ][ P3 data (open) ...
 *                                                        ^ last stable offset
 *   read_committed:  P1 data archived, P2 data acquirable, markers archived, P3 not reached
 * </pre>
 *
 * <p>A data batch of producer P is aborted when it is transactional and lies within
 * {@code firstOffset..lastOffset} of an aborted transaction of P ({@code lastOffset} is the ABORT
 * marker's offset). Immutable.
 *
 * @param stableEndOffset the offset acquisition stops before, exclusive: the last stable offset
 *     under read_committed, {@link Long#MAX_VALUE} (no bound beyond the read) under
 *     read_uncommitted
 * @param abortedTransactions the aborted transactions overlapping the read, in marker order
 */
public record Isolation(long stableEndOffset, List<AbortedTransaction> abortedTransactions) {
    /** read_uncommitted: every data batch read may be acquired. */
    public static final Isolation READ_UNCOMMITTED = new Isolation(Long.MAX_VALUE, List.of());

    public Isolation {
        Objects.requireNonNull(abortedTransactions, "abortedTransactions");
    }

    /** read_committed, for a read of a log whose last stable offset is {@code lastStableOffset}. */
    public static Isolation readCommitted(long lastStableOffset, List<AbortedTransaction> abortedTransactions) {
        if (lastStableOffset < 0) {
            throw new IllegalArgumentException("last stable offset must be >= 0: " + lastStableOffset);
        }
        return new Isolation(lastStableOffset, abortedTransactions);
    }

    /** Whether {@code batch} holds records of an aborted transaction. */
    boolean isAborted(LogBatch batch) {
        if (!batch.transactional() || batch.control()) {
            return false;
        }
        for (int i = 0; i < abortedTransactions.size(); i++) {
            AbortedTransaction t = abortedTransactions.get(i);
            if (t.producerId() == batch.producerId() && t.firstOffset() <= batch.firstOffset()
                    && batch.lastOffset() <= t.lastOffset()) {
                return true;
            }
        }
        return false;
    }
}
