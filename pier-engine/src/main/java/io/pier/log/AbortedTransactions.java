package io.pier.log;

import java.util.ArrayList;
import java.util.List;

/**
 * The aborted transactions of one partition, in marker order (so ascending by
 * {@link AbortedTransaction#lastOffset()}), kept in memory. Filled by ABORT markers as they are
 * appended and rebuilt by the recovery scan on open; trimmed as the log start offset moves.
 * Owned by the log's thread.
 *
 * <p>Kafka keeps the same entries in a {@code .txnindex} file per segment. Pier already reads
 * every batch on open to check its CRC (see {@link LogRecovery}), so the markers are found in
 * that same pass at no extra I/O, and there is no second file to keep consistent with the log
 * after a torn write. An entry is 24 bytes; a file per segment becomes worth it once a
 * producer-state snapshot lets open skip the scan of synced segments.
 */
final class AbortedTransactions {
    private final ArrayList<AbortedTransaction> entries = new ArrayList<>();
    /** The longest {@code lastOffset - firstOffset} among the entries: bounds a lookup's scan. */
    private long maxSpan;

    /** Records a transaction aborted by a marker at {@code lastOffset}, after every earlier marker. */
    void add(long producerId, long firstOffset, long lastOffset) {
        entries.add(new AbortedTransaction(producerId, firstOffset, lastOffset));
        maxSpan = Math.max(maxSpan, lastOffset - firstOffset);
    }

    /**
     * The aborted transactions that overlap {@code [fetchOffset, upperBoundOffset)}: their marker
     * is at or after {@code fetchOffset} and they began before {@code upperBoundOffset}, in marker
     * order (Kafka's collectAbortedTxns).
     */
    List<AbortedTransaction> overlapping(long fetchOffset, long upperBoundOffset) {
        List<AbortedTransaction> out = new ArrayList<>();
        for (int i = firstEndingAtOrAfter(fetchOffset); i < entries.size(); i++) {
            AbortedTransaction t = entries.get(i);
            // Entries further on end later still; none of them can begin before the bound.
            if (t.lastOffset() - maxSpan >= upperBoundOffset) {
                break;
            }
            if (t.firstOffset() < upperBoundOffset) {
                out.add(t);
            }
        }
        return out;
    }

    private int firstEndingAtOrAfter(long offset) {
        int lo = 0;
        int hi = entries.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (entries.get(mid).lastOffset() < offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Forgets the transactions whose marker lies below the new log start offset. */
    void retainFrom(long logStartOffset) {
        int drop = firstEndingAtOrAfter(logStartOffset);
        if (drop > 0) {
            entries.subList(0, drop).clear();
        }
    }

    /** Forgets every transaction, for a log emptied and started afresh (a mirror's restart). */
    void clear() {
        entries.clear();
        maxSpan = 0;
    }

    int size() {
        return entries.size();
    }
}
