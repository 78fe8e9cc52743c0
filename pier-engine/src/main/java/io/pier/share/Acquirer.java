package io.pier.share;

import io.pier.state.PersistedBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.agrona.collections.LongHashSet;

/**
 * The acquisition rules of one share-partition (KIP-932 as Kafka 4.4 applies them), working on
 * the partition's {@link InFlightWindow} and {@link LockDeadlines}.
 *
 * <ul>
 *   <li>Offsets the log proved missing (between the fetch offset and the first batch read) are
 *       archived, so compacted holes do not block the start offset.
 *   <li>The budget is min(maxRecords, maxInFlightRecords - window), the window less the records at
 *       its front that an acknowledgement being written settles. A full window still allows
 *       re-acquiring released records up to the end offset.
 *   <li>batch_optimized finishes the log batch in which the budget ran out and cuts the result
 *       into ranges of about {@code batchSize}, only at log batch ends; record_limit stops at the
 *       budget exactly and caches the rest of the last log batch as AVAILABLE.
 *   <li>Poison-pill throttling: from delivery count max(2, ceil(limit/2)) on, a record is not
 *       acquired together with earlier records, and the number acquired halves with each further
 *       delivery; a record on its last attempt goes alone.
 *   <li>Control batches (transaction markers) are archived, never acquired, at either isolation
 *       level. Under read_committed nothing at or past the last stable offset is acquired, and the
 *       data batches of aborted transactions are archived with no delivery counted; neither uses
 *       the budget, and the start offset moves over both.
 * </ul>
 */
final class Acquirer {
    private final InFlightWindow window;
    private final LockDeadlines deadlines;
    private final Supplier<ShareConfig> config;
    /** Ordered by key: the keys one plan took, kept between plans so that it is not grown again each time. */
    private final LongHashSet takenKeys = new LongHashSet();

    Acquirer(InFlightWindow window, LockDeadlines deadlines, Supplier<ShareConfig> config) {
        this.window = window;
        this.deadlines = deadlines;
        this.config = config;
    }

    List<AcquiredRange> acquire(
            String memberId,
            long fetchOffset,
            List<LogBatch> read,
            AcquireLimits limits,
            Isolation isolation,
            RecordKeys keys,
            long nowMs) {
        checkAscending(read);
        List<LogBatch> logBatches = stableBatches(read, isolation.stableEndOffset());
        if (logBatches.isEmpty() || limits.maxRecords() <= 0) {
            return List.of();
        }
        ShareConfig config = this.config.get();
        archiveMissing(fetchOffset, logBatches.get(0).firstOffset() - 1, nowMs);

        long end = window.endExclusive();
        // Records whose ACCEPT or REJECT is being written no longer count: they leave with that write.
        long inFlight = end - window.startOffset() - window.settlingFront();
        long budget = Math.min(limits.maxRecords(), config.maxInFlightRecords() - inFlight);
        long lastToAcquire = logBatches.get(logBatches.size() - 1).lastOffset();
        if (window.ordersByKey()) {
            lastToAcquire = Math.min(lastToAcquire, Math.max(end, keys.knownEnd()) - 1);
        }
        if (budget <= 0) {
            if (inFlight == 0 || fetchOffset >= end) {
                return List.of();
            }
            // Full window: only records already inside it (released or timed out) may go out.
            budget = Math.min(limits.maxRecords(), end - fetchOffset);
            lastToAcquire = Math.min(lastToAcquire, end - 1);
        }
        List<Long> spent = new ArrayList<>();
        List<Run> unreadable = new ArrayList<>();
        List<Run> plan = plan(logBatches, limits, config, budget, lastToAcquire, spent, unreadable, isolation, keys);
        List<AcquiredRange> result = apply(memberId, plan, config, keys, nowMs);
        archiveUnreadable(unreadable, keys, nowMs);
        for (long o : spent) {
            window.settle(o, config.deadState(), ChangeCause.LIMIT_LOWERED);
        }
        if (!spent.isEmpty()) {
            window.advanceOverTerminal();
        }
        if (limits.mode() == AcquireMode.RECORD_LIMIT && !plan.isEmpty()) {
            long lastAcquired = plan.get(plan.size() - 1).last;
            if (lastAcquired >= end) {
                cacheRestOfBatch(logBatches, lastAcquired, keys, nowMs);
            }
        }
        return result;
    }

    private List<Run> plan(
            List<LogBatch> batches,
            AcquireLimits limits,
            ShareConfig config,
            long budget,
            long lastToAcquire,
            List<Long> spent,
            List<Run> unreadable,
            Isolation isolation,
            RecordKeys keys) {
        int limit = config.deliveryCountLimit();
        // Ordered by key: a record is taken only if no earlier record of its key is unsettled,
        // in the window or taken earlier in this plan.
        boolean ordered = window.ordersByKey();
        if (ordered) {
            takenKeys.clear();
        }
        int threshold = config.throttleThreshold();
        boolean batchOptimized = limits.mode() == AcquireMode.BATCH_OPTIMIZED;
        long end = window.endExclusive();
        List<Run> runs = new ArrayList<>();
        Run run = null;
        long acquired = 0;
        long throttleCap = -1;
        long finishAt = Long.MAX_VALUE;
        int bi = 0;
        int checkedBatch = -1;
        boolean aborted = false;
        for (long o = Math.max(batches.get(0).firstOffset(), window.startOffset()); o <= lastToAcquire; o++) {
            while (batches.get(bi).lastOffset() < o) {
                bi++;
            }
            LogBatch batch = batches.get(bi);
            if (checkedBatch != bi) {
                checkedBatch = bi;
                aborted = isolation.isAborted(batch);
            }
            boolean inBatch = o >= batch.firstOffset();
            if (acquired >= budget && (!batchOptimized || o > finishAt)) {
                break;
            }
            boolean cached = o < end;
            if (cached && !window.isAcquirable(o)) {
                run = null;
                if (ordered) {
                    // Straight to the next record acquisition may take, over the blocked ones.
                    long next = window.nextReady(o + 1);
                    o = (next < 0 || next > end ? end : next) - 1;
                }
                continue;
            }
            if (!cached && ordered) {
                long key = keys.keyOf(o);
                if (key != RecordKeys.NO_KEY && (window.isKeyOpen(key) || !takenKeys.add(key))) {
                    run = null; // waits behind an earlier record of its key
                    continue;
                }
            }
            if (inBatch && (batch.control() || aborted)) {
                // A transaction marker, which the consumer would only acknowledge as a gap, or a
                // record of an aborted transaction, which a read_committed group never sees.
                noteUnreadable(unreadable, o, batch.control() ? ChangeCause.MISSING_FROM_LOG : ChangeCause.ABORTED);
                run = null;
                continue;
            }
            int count = cached ? window.deliveryCount(o) : 0;
            if (count >= limit) {
                // Only after the limit was lowered at runtime: the record has had its deliveries.
                spent.add(o);
                run = null;
                continue;
            }
            if (limit > 2 && count == limit - 1 && acquired > 0) {
                break;
            }
            if (count >= threshold && throttleCap < 0) {
                if (acquired > 0) {
                    break;
                }
                throttleCap = Math.max(1, budget >> Math.min(62, count - threshold + 1));
            }
            short newCount = (short) (count + 1);
            if (run == null || run.last + 1 != o || run.count != newCount) {
                run = new Run(o, newCount);
                runs.add(run);
            }
            run.last = o;
            acquired++;
            if (batchOptimized && inBatch && o == batch.lastOffset() && run.size() >= limits.batchSize()) {
                run = null;
            }
            if (acquired == budget) {
                finishAt = inBatch ? batch.lastOffset() : o;
            }
            if ((limit > 2 && newCount == limit) || (throttleCap > 0 && acquired >= throttleCap)) {
                break;
            }
        }
        return runs;
    }

    private List<AcquiredRange> apply(String memberId, List<Run> plan, ShareConfig config, RecordKeys keys,
            long nowMs) {
        List<AcquiredRange> result = new ArrayList<>(plan.size());
        for (Run r : plan) {
            while (window.endExclusive() <= r.last) {
                appendUnread(keys, nowMs);
            }
            AcquisitionLock lock = deadlines.arm(r.first, r.last, nowMs + config.lockDurationMs());
            for (long o = r.first; o <= r.last; o++) {
                window.acquire(o, memberId, lock);
            }
            result.add(new AcquiredRange(r.first, r.last, r.count));
        }
        return result;
    }

    /** Adds {@code o} to the ascending runs of offsets no consumer gets, each with one cause. */
    private static void noteUnreadable(List<Run> unreadable, long o, ChangeCause cause) {
        Run last = unreadable.isEmpty() ? null : unreadable.get(unreadable.size() - 1);
        if (last != null && last.last + 1 == o && last.cause == cause) {
            last.last = o;
        } else {
            unreadable.add(new Run(o, (short) 0, cause));
        }
    }

    /**
     * Offsets of control batches and, under read_committed, of aborted transactions hold no
     * record for a consumer: archived, as a client's GAP would, with no delivery counted.
     */
    private void archiveUnreadable(List<Run> unreadable, RecordKeys keys, long nowMs) {
        if (unreadable.isEmpty()) {
            return;
        }
        for (Run r : unreadable) {
            for (long o = r.first; o <= r.last; o++) {
                while (window.endExclusive() < o) {
                    appendUnread(keys, nowMs);
                }
                if (window.endExclusive() == o) {
                    window.append(RecordState.ARCHIVED, (short) 0, nowMs);
                } else {
                    window.settle(o, RecordState.ARCHIVED, r.cause);
                }
            }
        }
        window.advanceOverTerminal();
    }

    /** The batches wholly below {@code stableEndOffset}; a read never splits a batch there. */
    private static List<LogBatch> stableBatches(List<LogBatch> batches, long stableEndOffset) {
        int n = batches.size();
        while (n > 0 && batches.get(n - 1).lastOffset() >= stableEndOffset) {
            n--;
        }
        return n == batches.size() ? batches : batches.subList(0, n);
    }

    /** Offsets in [fetchOffset, lastMissing] that the log did not return do not exist. */
    private void archiveMissing(long fetchOffset, long lastMissing, long nowMs) {
        long from = Math.max(fetchOffset, window.startOffset());
        if (from > lastMissing) {
            return;
        }
        long cachedTo = Math.min(lastMissing, window.endExclusive() - 1);
        for (long o = from; o <= cachedTo; o++) {
            if (window.isAcquirable(o)) {
                window.settle(o, RecordState.ARCHIVED, ChangeCause.MISSING_FROM_LOG);
            }
        }
        while (window.endExclusive() < from) {
            window.append(RecordState.AVAILABLE, (short) 0, nowMs);
        }
        while (window.endExclusive() <= lastMissing) {
            window.append(RecordState.ARCHIVED, (short) 0, nowMs);
        }
        window.advanceOverTerminal();
    }

    /** Takes the next record read into the window, AVAILABLE and never delivered, with its key. */
    private void appendUnread(RecordKeys keys, long nowMs) {
        window.append(RecordState.AVAILABLE, (short) 0, nowMs, PersistedBatch.NO_BACKOFF,
                keys.keyOf(window.endExclusive()));
    }

    private void cacheRestOfBatch(List<LogBatch> batches, long lastAcquired, RecordKeys keys, long nowMs) {
        for (LogBatch b : batches) {
            if (b.firstOffset() <= lastAcquired && lastAcquired <= b.lastOffset()) {
                while (window.endExclusive() <= b.lastOffset()) {
                    appendUnread(keys, nowMs);
                }
                return;
            }
        }
    }

    private static void checkAscending(List<LogBatch> batches) {
        for (int i = 1; i < batches.size(); i++) {
            if (batches.get(i).firstOffset() <= batches.get(i - 1).lastOffset()) {
                throw new IllegalArgumentException("log batches must be ascending: " + batches);
            }
        }
    }

    private static final class Run {
        final long first;
        final short count;
        final ChangeCause cause;
        long last;

        Run(long first, short count) {
            this(first, count, ChangeCause.ACQUIRE);
        }

        Run(long first, short count, ChangeCause cause) {
            this.first = first;
            this.count = count;
            this.cause = cause;
            this.last = first;
        }

        long size() {
            return last - first + 1;
        }
    }
}
