package io.pier.state;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.TreeSet;

/**
 * Merges stored state batches with the batches of a new write, as Kafka's share coordinator does
 * when it replays an update onto a snapshot.
 *
 * <ol>
 *   <li>Batches ending below the start offset are dropped; one straddling it is trimmed to begin
 *       there.
 *   <li>Where batches overlap, the one with the higher priority keeps the overlapping offsets:
 *       higher delivery count first, then the higher state id (ARCHIVED 4 &gt; ARCHIVING 3 &gt; ACKNOWLEDGED 2 &gt;
 *       AVAILABLE 0).
 *   <li>Touching or overlapping pieces with the same (state, delivery count) become one batch.
 * </ol>
 *
 * <pre>
 *   old:   [10 ........ 19 AVAILABLE c1]
 *   new:         [14 . 16 ACKED c1]
 *   out:   [10 . 13 AV c1][14 . 16 ACKED c1][17 . 19 AV c1]
 * </pre>
 *
 * <p>The result is sorted and non-overlapping. Implemented as one sweep over the distinct range
 * boundaries, keeping the covering batches in a heap by priority, so each offset ends up with the
 * highest-priority batch that covered it, which is what pairwise resolution converges to.
 */
public final class StateBatchCombiner {
    private StateBatchCombiner() {}

    /**
     * @param existing the stored batches (any order)
     * @param incoming the batches of the new write (any order)
     * @param startOffset the effective start offset; {@code -1} prunes nothing
     */
    public static List<PersistedBatch> combine(
            List<PersistedBatch> existing, List<PersistedBatch> incoming, long startOffset) {
        List<PersistedBatch> all = new ArrayList<>(existing.size() + incoming.size());
        addPruned(existing, startOffset, all);
        addPruned(incoming, startOffset, all);
        if (all.isEmpty()) {
            return List.of();
        }
        all.sort(Comparator.comparingLong(PersistedBatch::firstOffset));

        TreeSet<Long> boundaries = new TreeSet<>();
        for (PersistedBatch b : all) {
            boundaries.add(b.firstOffset());
            boundaries.add(b.lastOffset() + 1);
        }
        PriorityQueue<PersistedBatch> covering =
                new PriorityQueue<>((a, b) -> b.comparePriority(a));
        List<PersistedBatch> out = new ArrayList<>();
        int next = 0;
        Long from = boundaries.first();
        while (from != null) {
            Long to = boundaries.higher(from);
            if (to == null) {
                break;
            }
            while (next < all.size() && all.get(next).firstOffset() == from) {
                covering.add(all.get(next++));
            }
            while (!covering.isEmpty() && covering.peek().lastOffset() < from) {
                covering.poll();
            }
            if (!covering.isEmpty()) {
                PersistedBatch top = covering.peek();
                append(out, top.withRange(from, to - 1));
            }
            from = to;
        }
        return List.copyOf(out);
    }

    private static void addPruned(
            List<PersistedBatch> batches, long startOffset, List<PersistedBatch> into) {
        for (PersistedBatch b : batches) {
            if (startOffset < 0 || b.firstOffset() >= startOffset) {
                into.add(b);
            } else if (b.lastOffset() >= startOffset) {
                into.add(b.withRange(startOffset, b.lastOffset()));
            }
        }
    }

    private static void append(List<PersistedBatch> out, PersistedBatch piece) {
        if (!out.isEmpty()) {
            PersistedBatch last = out.get(out.size() - 1);
            if (last.lastOffset() + 1 == piece.firstOffset() && last.sameValue(piece)) {
                out.set(out.size() - 1, last.withRange(last.firstOffset(), piece.lastOffset()));
                return;
            }
        }
        out.add(piece);
    }
}
