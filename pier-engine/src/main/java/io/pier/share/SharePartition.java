package io.pier.share;

import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateWrite;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.protocol.Errors;

/**
 * Delivery state of one share group on one topic-partition (KIP-932): which records are
 * available, acquired by which member until when, acknowledged or archived, and how often each was
 * delivered. Owned by the single shard thread that owns the topic-partition; no method blocks,
 * starts threads or reads a clock (time arrives as {@code nowMs}, monotonic milliseconds).
 *
 * <p>Record state machine (every change goes through one checked method of the window):
 *
 * <pre>
 *                 acquire (count + 1)
 *   AVAILABLE  ---------------------------&gt;  ACQUIRED --- ACCEPT ---&gt; ACKNOWLEDGED
 *      ^   |   &lt;---------------------------   |
 *      |   |    RELEASE, lock expiry,        +--- REJECT, GAP, or RELEASE / expiry
 *      |   |    member release (count &lt; limit)    at count &gt;= limit ---&gt; ARCHIVED
 *      |   +--- log start moved, missing from log -------------------------&gt; ARCHIVED
 *      |                                                 with a dead-letter queue, REJECT
 *      +-- not before its backoff ends (RELEASE            and the limit lead to ARCHIVING,
 *          with pier.share.release.backoff.*)              then ARCHIVED once its letter is
 *                                                          written (takeDeadLetters)
 * </pre>
 *
 * <p>Window and offsets:
 *
 * <pre>
 *   startOffset (SPSO)                endOffset (SPEO)
 *        |                                 |
 *        [ ACQ ACQ AVL ACK ARC ACQ ... AVL ]   next fetch = first AVAILABLE, else SPEO + 1
 *        |&lt;------ in flight (capped at maxInFlightRecords) -----&gt;|
 * </pre>
 *
 * <p>Invariants: the SPSO is the first offset not in a terminal state (or with a change in
 * flight); every offset below it is settled or forgotten; an offset is held by at most one member;
 * no delivery count exceeds the delivery limit in force when the record was acquired.
 *
 * <p>Acknowledgements and member releases are two-phase: they return a {@link PendingChange}
 * whose write the caller persists, then {@link #commit} or {@link #rollback}. Lock expiry and
 * log-start movement apply at once.
 *
 * <p>Every record-state change is told to the {@link ShareEvents} given at creation (metrics).
 */
public final class SharePartition {
    private final SharePartitionKey key;
    private final int stateEpoch;
    private final Supplier<ShareConfig> config;
    private final InFlightWindow window;
    private final LockDeadlines deadlines = new LockDeadlines();
    private final Acquirer acquirer;

    private SharePartition(SharePartitionKey key, int stateEpoch, long startOffset, Supplier<ShareConfig> config,
            ShareEvents events) {
        if (startOffset < 0) {
            throw new IllegalArgumentException("start offset must be resolved first: " + startOffset);
        }
        this.key = Objects.requireNonNull(key, "key");
        this.stateEpoch = stateEpoch;
        this.config = Objects.requireNonNull(config, "config");
        this.window = new InFlightWindow(startOffset, Objects.requireNonNull(events, "events"));
        this.acquirer = new Acquirer(window, deadlines, config);
    }

    /** A share-partition with no delivery history, starting at an offset the server resolved. */
    public static SharePartition fresh(
            SharePartitionKey key, int stateEpoch, long startOffset, Supplier<ShareConfig> config) {
        return fresh(key, stateEpoch, startOffset, config, ShareEvents.NONE);
    }

    /** As {@link #fresh(SharePartitionKey, int, long, Supplier)}, telling {@code events} what happens. */
    public static SharePartition fresh(SharePartitionKey key, int stateEpoch, long startOffset,
            Supplier<ShareConfig> config, ShareEvents events) {
        return new SharePartition(key, stateEpoch, startOffset, config, events);
    }

    /**
     * Rebuilds a share-partition from persisted state. Loaded records come back unowned; gaps
     * between the start offset and the batches are AVAILABLE with delivery count 0, so they are
     * fetched first.
     *
     * @throws IllegalArgumentException if the start offset is unresolved (-1) or the batches are
     *     unsorted, overlapping, or start below the start offset
     */
    public static SharePartition load(
            SharePartitionKey key, ShareState state, Supplier<ShareConfig> config) {
        return load(key, state, config, ShareEvents.NONE, 0L);
    }

    /**
     * As {@link #load(SharePartitionKey, ShareState, Supplier)}, telling {@code events} what
     * happens; loaded records count as entering the window at {@code nowMs}.
     */
    public static SharePartition load(SharePartitionKey key, ShareState state, Supplier<ShareConfig> config,
            ShareEvents events, long nowMs) {
        SharePartition sp = new SharePartition(key, state.stateEpoch(), state.startOffset(), config, events);
        long expected = state.startOffset();
        for (PersistedBatch b : state.batches()) {
            if (b.firstOffset() < expected) {
                throw new IllegalArgumentException("persisted batch " + b + " overlaps below offset "
                        + expected + " (start offset " + state.startOffset() + ")");
            }
            while (sp.window.endExclusive() < b.firstOffset()) {
                sp.window.append(RecordState.AVAILABLE, (short) 0, nowMs);
            }
            RecordState st = RecordState.forId(b.state());
            for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                sp.window.append(st, b.deliveryCount(), nowMs, b.notBeforeMs());
            }
            expected = b.lastOffset() + 1;
        }
        sp.window.advanceOverTerminal();
        return sp;
    }

    /**
     * A write carrying only the current start offset and no batches: what the server persists
     * after {@link #fresh} resolved the first SPSO from {@code share.auto.offset.reset}, before
     * answering the fetch that triggered it.
     */
    public ShareStateWrite startOffsetWrite() {
        return new ShareStateWrite(key, stateEpoch, startOffset(), List.of());
    }

    public SharePartitionKey key() {
        return key;
    }

    public int stateEpoch() {
        return stateEpoch;
    }

    /** SPSO: the first offset not yet settled for good. */
    public long startOffset() {
        return window.startOffset();
    }

    /** SPEO: the last offset in the in-flight window, or {@link #startOffset()} when it is empty. */
    public long endOffset() {
        return window.size() == 0 ? window.startOffset() : window.endExclusive() - 1;
    }

    /** Records in flight, SPEO - SPSO + 1, or 0 when the window is empty. */
    public int inFlightRecords() {
        return window.size();
    }

    /** Records of the window in one state, for metrics. */
    public int recordCount(RecordState state) {
        return window.count(state);
    }

    /**
     * How long the oldest AVAILABLE, ACQUIRED or ARCHIVING record has been in the window (since it was first
     * taken in from the log, or since the state was loaded), or 0 if there is none.
     */
    public long oldestUnsettledAgeMs(long nowMs) {
        long entered = window.oldestUnsettledEnteredMs();
        return entered == Long.MAX_VALUE ? 0 : Math.max(0, nowMs - entered);
    }

    /** ACQUIRED records by the member holding them, for metrics; costs a scan of the window. */
    public Map<String, Integer> acquiredByMember() {
        Map<String, Integer> byMember = new HashMap<>();
        if (window.count(RecordState.ACQUIRED) == 0) {
            return byMember;
        }
        // Counted per run of offsets with one owner (an acquisition stores one string for all its
        // offsets, so comparing them is a reference check), not boxed and hashed per record.
        String runOwner = null;
        int run = 0;
        for (long o = window.startOffset(); o < window.endExclusive(); o++) {
            String owner = window.state(o) == RecordState.ACQUIRED ? window.owner(o) : null;
            if (!Objects.equals(owner, runOwner)) {
                if (runOwner != null) {
                    byMember.merge(runOwner, run, Integer::sum);
                }
                runOwner = owner;
                run = 0;
            }
            run++;
        }
        if (runOwner != null) {
            byMember.merge(runOwner, run, Integer::sum);
        }
        return byMember;
    }

    /**
     * Records of the window in a terminal state (KIP-1226 {@code DeliveryCompleteCount}), counted
     * from the SPSO.
     */
    public int deliveryCompleteCount() {
        return window.count(RecordState.ACKNOWLEDGED) + window.count(RecordState.ARCHIVED);
    }

    /** Where the server should read the log: the first AVAILABLE offset, else past the window. */
    public long nextFetchOffset() {
        return window.firstAcquirableOffset();
    }

    /**
     * Whether a fetch could acquire something now: a record inside the window is available, or
     * the log has records past the window and the window has room.
     *
     * @param logEndOffset the offset the server may read up to, exclusive (high watermark or last
     *     stable offset)
     */
    public boolean hasAcquirableWork(long logEndOffset) {
        if (window.acquirableCount() > 0) {
            return true;
        }
        return logEndOffset > window.endExclusive()
                && unsettledWindow() < config.get().maxInFlightRecords();
    }

    /**
     * Whether {@code memberId} holds this share-partition up, and since when its fetches have found
     * it so: the in-flight window is full and its first record (after any that acknowledgements
     * being written settle) is ACQUIRED by that member with no acknowledgement in flight, so
     * nothing can be acquired here (by anyone) until that member
     * acknowledges or releases it, or its lock expires.
     *
     * <p>A long poll of that member must not wait for this partition to change: the change is the
     * member's own acknowledgement, which its client may hold back until the poll returns. The
     * first call that finds the hold (for the record's current lock, so a renewal starts again)
     * notes the time; the answer is how long ago that was, so the holder's consecutive fetches
     * can wait longer and longer instead of spinning.
     *
     * @return milliseconds since the holder's fetches first found the hold (0 on the first), or
     *     -1 if {@code memberId} does not hold the partition up
     */
    public long heldUpByMs(String memberId, long nowMs) {
        // The first record no acknowledgement being written settles: the one that holds the window.
        int settling = window.settlingFront();
        int unsettled = window.size() - settling;
        if (unsettled == 0 || unsettled < config.get().maxInFlightRecords()) {
            return -1;
        }
        long first = window.startOffset() + settling;
        AcquisitionLock lock = window.lock(first);
        if (window.state(first) != RecordState.ACQUIRED || window.pending(first) != null || lock == null
                || !memberId.equals(window.owner(first))) {
            return -1;
        }
        if (lock.heldUpSinceMs < 0) {
            lock.heldUpSinceMs = nowMs;
        }
        return Math.max(0, nowMs - lock.heldUpSinceMs);
    }

    /** Whether the in-flight window has room for records past its end (else only records in it may go). */
    public boolean hasRoomPastWindow() {
        return unsettledWindow() < config.get().maxInFlightRecords();
    }

    /** The in-flight window less the records at its front that acknowledgements being written settle. */
    private int unsettledWindow() {
        return window.size() - window.settlingFront();
    }

    /**
     * Earliest acquisition-lock deadline or backoff end, or {@link Long#MAX_VALUE} if nothing is
     * locked or waiting: when {@link #expireLocks} next has work.
     */
    public long nextDeadlineMs() {
        return Math.min(deadlines.nextDeadlineMs(), window.nextBackoffEndMs());
    }

    /** AVAILABLE records waiting for their release backoff to end. */
    public int recordsInBackoff() {
        return window.inBackoff();
    }

    /**
     * Returns, and clears, whether records became acquirable (released, timed out, freed window
     * room) since the last call, so the owner can wake fetches parked on this partition.
     */
    public boolean consumeStateChanged() {
        return window.consumeBecameAcquirable();
    }

    /**
     * Acquires records for a member from what the server read from the log, read_uncommitted.
     *
     * @param fetchOffset the offset the log was read from (normally {@link #nextFetchOffset()})
     * @param logBatches the batches read, ascending; their bounds drive batch_optimized cuts
     * @return the acquired ranges, ascending and disjoint, each with its delivery count
     */
    public List<AcquiredRange> acquire(
            String memberId, long fetchOffset, List<LogBatch> logBatches, AcquireLimits limits, long nowMs) {
        return acquire(memberId, fetchOffset, logBatches, limits, Isolation.READ_UNCOMMITTED, nowMs);
    }

    /**
     * As {@link #acquire(String, long, List, AcquireLimits, long)}, seeing the read as {@code
     * isolation} allows: under read_committed nothing at or past its last stable offset is
     * acquired, and records of aborted transactions are archived (no delivery counted) so the
     * start offset moves over them.
     */
    public List<AcquiredRange> acquire(String memberId, long fetchOffset, List<LogBatch> logBatches,
            AcquireLimits limits, Isolation isolation, long nowMs) {
        return acquire(memberId, fetchOffset, logBatches, limits, isolation, RecordKeys.NONE, nowMs);
    }

    /**
     * As {@link #acquire(String, long, List, AcquireLimits, Isolation, long)}, with the keys of the
     * records read, which a share-partition ordered by key ({@code pier.share.ordering=key}) needs:
     * it acquires a keyed record only when every earlier record of its key is settled for good.
     * Before that, {@link #keysToLearn()} must have been answered.
     */
    public List<AcquiredRange> acquire(String memberId, long fetchOffset, List<LogBatch> logBatches,
            AcquireLimits limits, Isolation isolation, RecordKeys keys, long nowMs) {
        Objects.requireNonNull(memberId, "memberId");
        Objects.requireNonNull(isolation, "isolation");
        window.orderByKey(config.get().orderByKey());
        if (window.keysUnknownUpTo() > 0) {
            return List.of(); // the keys of records in the window must be learned first
        }
        return acquirer.acquire(memberId, fetchOffset, logBatches, limits, isolation, keys, nowMs);
    }

    /**
     * Ordered by key: the end (exclusive) of the records, from the start offset, whose keys must be
     * learned ({@link #learnKeys}) from the log before the next acquisition, after a load or when
     * ordering was turned on; 0 if none.
     */
    public long keysToLearn() {
        window.orderByKey(config.get().orderByKey());
        return window.keysUnknownUpTo();
    }

    /** The keys of the records from the start offset up to {@link #keysToLearn()}, read from the log. */
    public void learnKeys(RecordKeys keys) {
        window.learnKeys(keys);
    }

    /** Keys with a record waiting behind an earlier record of theirs (ordered by key). */
    public int blockedKeys() {
        return window.blockedKeys();
    }

    /** How long the oldest record waiting behind an earlier one of its key has been in the window; 0 if none. */
    public long oldestBlockedAgeMs(long nowMs) {
        long offset = window.oldestBlockedOffset();
        return offset < 0 || !window.contains(offset) ? 0 : Math.max(0, nowMs - window.enteredMs(offset));
    }

    /**
     * Validates and applies a member's acknowledgements for this partition, all or nothing.
     *
     * <p>INVALID_REQUEST: a malformed batch, batches out of order, or offsets past the window.
     * INVALID_RECORD_STATE: an offset not ACQUIRED, held by another member, already in
     * transition, a RENEW while renewal is disabled, nothing in flight, or a batch that starts
     * below the SPSO (its records there are settled, and not by this delivery's verdict). RENEW
     * re-arms the lock at once and is never persisted.
     */
    public AckResult acknowledge(String memberId, List<AckBatch> batches, long nowMs) {
        ShareConfig cfg = config.get();
        Errors error = validate(memberId, batches, cfg);
        if (error != Errors.NONE) {
            return AckResult.failed(error);
        }
        PendingChange change = new PendingChange(this, offsetsInWindow(batches));
        StateWriteBuilder write = new StateWriteBuilder();
        long renewFirst = -1;
        long lastSeen = -1;
        for (AckBatch b : batches) {
            for (long o = Math.max(b.firstOffset(), Math.max(startOffset(), lastSeen + 1)); o <= b.lastOffset(); o++) {
                lastSeen = o;
                AcknowledgeType type = b.typeAt(o);
                if (type == AcknowledgeType.RENEW) {
                    renewFirst = renewFirst < 0 ? o : renewFirst;
                    continue;
                }
                renewFirst = renew(renewFirst, o - 1, cfg, nowMs);
                short count = window.deliveryCount(o);
                RecordState target = targetOf(type, count, cfg);
                long notBefore = type == AcknowledgeType.RELEASE ? backoffEnd(target, count, cfg, nowMs)
                        : PersistedBatch.NO_BACKOFF;
                window.markPending(o, change, target, notBefore);
                change.add(o, ChangeCause.of(type));
                write.add(o, target, count, notBefore);
            }
            renewFirst = renew(renewFirst, lastSeen, cfg, nowMs);
        }
        if (!write.isEmpty()) {
            change.write(new ShareStateWrite(key, stateEpoch, startOffset(), write.build()));
        }
        return AckResult.pending(change);
    }

    /**
     * Starts the locks of what one acquisition gave {@code memberId} again, from {@code nowMs}: the
     * acquisition had to be made durable before its answer could go out (on a gateway, a round trip
     * to the upstream that can take seconds), and the member's lock must not run out while it cannot
     * yet see its records. Only offsets that still hold that delivery (ACQUIRED by the member with
     * the range's delivery count, no change pending) are touched; what expired, was given back or
     * settled meanwhile is left as it is.
     */
    public void restartLocks(String memberId, List<AcquiredRange> ranges, long nowMs) {
        ShareConfig cfg = config.get();
        for (AcquiredRange r : ranges) {
            long runFirst = -1;
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                boolean holds = window.contains(o) && window.state(o) == RecordState.ACQUIRED
                        && window.pending(o) == null && window.deliveryCount(o) == r.deliveryCount()
                        && memberId.equals(window.owner(o));
                if (holds && runFirst < 0) {
                    runFirst = o;
                } else if (!holds && runFirst >= 0) {
                    runFirst = renew(runFirst, o - 1, cfg, nowMs);
                }
            }
            renew(runFirst, r.lastOffset(), cfg, nowMs);
        }
    }

    /** Makes a pending change final: records settle, their locks go, the SPSO advances. */
    public void commit(PendingChange change) {
        change.resolve(this);
        for (int i = 0; i < change.offsetCount(); i++) {
            window.settlePending(change.offset(i), change, change.cause(i));
        }
        window.advanceOverTerminal();
    }

    /**
     * Undoes a pending change after its write failed: records stay ACQUIRED by their member,
     * except those whose lock expired or whose member was released meanwhile, which become
     * AVAILABLE (ARCHIVED at the delivery limit).
     */
    public void rollback(PendingChange change) {
        change.resolve(this);
        ShareConfig cfg = config.get();
        for (int i = 0; i < change.offsetCount(); i++) {
            long o = change.offset(i);
            if (window.contains(o) && window.pending(o) == change) {
                window.clearPending(o);
                // An ARCHIVING record whose dead letter went unrecorded stays ARCHIVING, to be taken again.
                if (window.state(o) == RecordState.ACQUIRED && window.lock(o) == null) {
                    window.settle(o, releasedState(window.deliveryCount(o), cfg), ChangeCause.ROLLBACK);
                }
            }
        }
        window.advanceOverTerminal();
    }

    /**
     * Times out acquisition locks due at {@code nowMs}: their records become AVAILABLE (in backoff
     * if the group's backoff covers lock expiry), or ARCHIVED at the delivery limit. Also ends the
     * backoffs due, so those records may be acquired. Costs two heap peeks when nothing is due.
     *
     * @return the write to persist; the transition stands even if it fails
     */
    public Optional<ShareStateWrite> expireLocks(long nowMs) {
        window.endBackoffs(nowMs);
        ShareConfig cfg = config.get();
        StateWriteBuilder write = new StateWriteBuilder();
        long spsoBefore = startOffset();
        AcquisitionLock lock;
        while ((lock = deadlines.pollExpired(nowMs)) != null) {
            long from = Math.max(lock.firstOffset, window.startOffset());
            long to = Math.min(lock.lastOffset, window.endExclusive() - 1);
            for (long o = from; o <= to; o++) {
                if (window.lock(o) != lock) {
                    continue;
                }
                if (window.pending(o) != null) {
                    window.setLock(o, null);
                    continue;
                }
                short count = window.deliveryCount(o);
                RecordState next = releasedState(count, cfg);
                long notBefore = cfg.backoff().onLockExpiry() ? backoffEnd(next, count, cfg, nowMs)
                        : PersistedBatch.NO_BACKOFF;
                window.settle(o, next, ChangeCause.LOCK_EXPIRY, notBefore);
                write.add(o, next, count, notBefore);
            }
        }
        if (write.isEmpty()) {
            return Optional.empty();
        }
        window.advanceOverTerminal();
        return Optional.of(new ShareStateWrite(key, stateEpoch, spsoBefore, write.build()));
    }

    /**
     * Releases every record a member holds (its share session closed or its connection dropped):
     * AVAILABLE again, or ARCHIVED at the delivery limit; delivery counts unchanged.
     *
     * @return the change to persist and then commit or roll back; empty if the member held nothing
     */
    public Optional<PendingChange> releaseMember(String memberId, long nowMs) {
        if (window.count(RecordState.ACQUIRED) == 0) {
            return Optional.empty();
        }
        ShareConfig cfg = config.get();
        PendingChange change = new PendingChange(this);
        StateWriteBuilder write = new StateWriteBuilder();
        for (long o = window.startOffset(); o < window.endExclusive(); o++) {
            if (window.state(o) != RecordState.ACQUIRED || !memberId.equals(window.owner(o))) {
                continue;
            }
            if (window.pending(o) != null) {
                window.setLock(o, null);
                continue;
            }
            RecordState target = releasedState(window.deliveryCount(o), cfg);
            window.markPending(o, change, target);
            change.add(o, ChangeCause.MEMBER_RELEASE);
            write.add(o, target, window.deliveryCount(o));
        }
        if (write.isEmpty()) {
            return Optional.empty();
        }
        change.write(new ShareStateWrite(key, stateEpoch, startOffset(), write.build()));
        return Optional.of(change);
    }

    /**
     * The log start offset moved past the SPSO (retention or DeleteRecords): records below it are
     * gone, so the SPSO (and SPEO if behind) moves there. Nothing is persisted now; the next write
     * carries the new start offset.
     *
     * <p>Records below it are forgotten at once, ACQUIRED ones included: the holder's later
     * acknowledgements of them are refused (INVALID_RECORD_STATE), a batch reaching past the new
     * SPSO too, as for any batch starting below the SPSO; Kafka, which archives such records,
     * refuses them too.
     */
    public void onLogStartOffsetMoved(long logStartOffset) {
        if (logStartOffset <= window.startOffset()) {
            return;
        }
        window.dropBefore(logStartOffset);
        window.advanceOverTerminal();
        window.noteWindowShrank();
    }

    /** Records waiting for their dead letter (ARCHIVING), taken or not. */
    public int deadLettersWaiting() {
        return window.count(RecordState.ARCHIVING);
    }

    /**
     * The ARCHIVING records that were ARCHIVING when the state was loaded (their letters marked
     * recovered), taken or not: after a crash their dead letters may be in the queue already.
     */
    public List<DeadLetterBatch.Letter> deadLettersLoaded() {
        List<DeadLetterBatch.Letter> out = new ArrayList<>();
        if (window.count(RecordState.ARCHIVING) == 0) {
            return out;
        }
        int limit = config.get().deliveryCountLimit();
        for (long o = window.startOffset(); o < window.endExclusive(); o++) {
            if (window.state(o) == RecordState.ARCHIVING && window.deathCause(o) == null) {
                out.add(letterAt(o, limit));
            }
        }
        return out;
    }

    /**
     * The dead letter of the ARCHIVING record at {@code offset}. A record loaded ARCHIVING does not
     * remember why it died: at the delivery limit it counts as having reached it, else as rejected.
     */
    private DeadLetterBatch.Letter letterAt(long offset, int limit) {
        short count = window.deliveryCount(offset);
        ChangeCause cause = window.deathCause(offset);
        boolean rejected = cause == null ? count < limit : cause == ChangeCause.REJECT;
        return new DeadLetterBatch.Letter(offset, count,
                rejected ? DeadLetterBatch.Reason.REJECTED : DeadLetterBatch.Reason.DELIVERY_LIMIT, cause == null);
    }

    /**
     * Takes up to {@code max} ARCHIVING records not already taken, lowest offsets first, for their
     * dead letters; empty if there are none.
     */
    public Optional<DeadLetterBatch> takeDeadLetters(int max) {
        if (window.count(RecordState.ARCHIVING) == 0 || max <= 0) {
            return Optional.empty();
        }
        int limit = config.get().deliveryCountLimit();
        List<DeadLetterBatch.Letter> letters = new ArrayList<>();
        PendingChange change = new PendingChange(this);
        StateWriteBuilder write = new StateWriteBuilder();
        StateWriteBuilder dying = new StateWriteBuilder();
        for (long o = window.startOffset(); o < window.endExclusive() && letters.size() < max; o++) {
            if (window.state(o) != RecordState.ARCHIVING || window.pending(o) != null) {
                continue;
            }
            short count = window.deliveryCount(o);
            letters.add(letterAt(o, limit));
            window.markPending(o, change, RecordState.ARCHIVED);
            change.add(o, ChangeCause.DEAD_LETTERED);
            write.add(o, RecordState.ARCHIVED, count);
            dying.add(o, RecordState.ARCHIVING, count);
        }
        if (letters.isEmpty()) {
            return Optional.empty();
        }
        change.write(new ShareStateWrite(key, stateEpoch, startOffset(), write.build()));
        return Optional.of(new DeadLetterBatch(letters, change,
                new ShareStateWrite(key, stateEpoch, startOffset(), dying.build())));
    }

    /**
     * Commits a dead-letter batch once its ARCHIVED write is durable: {@code written} of its
     * records have their dead letter, the others could not get one. The records become ARCHIVED
     * and the start offset moves over them.
     */
    public void commitDeadLetters(DeadLetterBatch batch, int written) {
        if (written < 0 || written > batch.letters().size()) {
            throw new IllegalArgumentException(written + " of " + batch.letters().size() + " dead letters written");
        }
        commit(batch.change());
        window.tellDeadLetters(written, batch.letters().size() - written);
    }

    private Errors validate(String memberId, List<AckBatch> batches, ShareConfig cfg) {
        long previousLast = -1;
        for (AckBatch b : batches) {
            if (!b.wellFormed() || b.firstOffset() < previousLast) {
                return Errors.INVALID_REQUEST;
            }
            previousLast = b.lastOffset();
        }
        long lastChecked = -1;
        for (AckBatch b : batches) {
            if (b.firstOffset() < startOffset()) {
                // Settled and forgotten, perhaps by another member after this one's lock expired or
                // its session ended: this member no longer holds that part, so it must not hear
                // that its verdict counted. Kafka 4.4 skips such a batch (or such a part) and
                // answers NONE, and its client reports the ACCEPT as done, one record then
                // confirmed to two consumers (ConsumerPausedPastSessionIT ran it against Kafka);
                // Pier refuses it, as Kafka refuses a late one inside the window. That holds for a
                // batch reaching into the window too: the member may hold its part there again (a
                // later delivery of the same records, acquired by a fetch sent before this
                // acknowledgement), and confirming the batch would confirm the settled part twice.
                return Errors.INVALID_RECORD_STATE;
            }
            if (window.size() == 0) {
                return Errors.INVALID_RECORD_STATE;
            }
            if (b.lastOffset() >= window.endExclusive()) {
                return Errors.INVALID_REQUEST;
            }
            boolean oneType = b.types().size() == 1;
            if (oneType && b.typeAt(b.firstOffset()) == AcknowledgeType.RENEW && !cfg.renewEnabled()) {
                return Errors.INVALID_RECORD_STATE;
            }
            // An acquisition stores one owner string for all its offsets, a different instance from
            // the acknowledging request's member id: once one is found equal to the member, its
            // other offsets compare by reference (String.equals checks that first).
            String confirmedOwner = null;
            for (long o = Math.max(b.firstOffset(), startOffset()); o <= b.lastOffset(); o++) {
                if (o <= lastChecked) {
                    // The same offset twice in one request: the first use already moved it.
                    return Errors.INVALID_RECORD_STATE;
                }
                lastChecked = o;
                if (window.state(o) != RecordState.ACQUIRED || window.pending(o) != null
                        || (!oneType && b.typeAt(o) == AcknowledgeType.RENEW && !cfg.renewEnabled())) {
                    return Errors.INVALID_RECORD_STATE;
                }
                String owner = window.owner(o);
                if (confirmedOwner == null || !confirmedOwner.equals(owner)) {
                    if (!memberId.equals(owner)) {
                        return Errors.INVALID_RECORD_STATE;
                    }
                    confirmedOwner = owner;
                }
            }
        }
        return Errors.NONE;
    }

    /** How many offsets of validated {@code batches} lie at or above the SPSO (at most the window's size). */
    private int offsetsInWindow(List<AckBatch> batches) {
        long n = 0;
        for (AckBatch b : batches) {
            n += Math.max(0, b.lastOffset() - Math.max(b.firstOffset(), startOffset()) + 1);
        }
        return (int) Math.min(n, window.size());
    }

    /** Re-arms the lock of {@code first..last} (all RENEW) for the full duration. */
    private long renew(long first, long last, ShareConfig cfg, long nowMs) {
        if (first < 0 || last < first) {
            return -1;
        }
        AcquisitionLock lock = deadlines.arm(first, last, nowMs + cfg.lockDurationMs());
        for (long o = first; o <= last; o++) {
            window.setLock(o, lock);
        }
        return -1;
    }

    private static RecordState targetOf(AcknowledgeType type, short deliveryCount, ShareConfig cfg) {
        switch (type) {
            case ACCEPT:
                return RecordState.ACKNOWLEDGED;
            case RELEASE:
                return releasedState(deliveryCount, cfg);
            case GAP:
                return RecordState.ARCHIVED;
            case REJECT:
                return cfg.deadState();
            default:
                throw new IllegalArgumentException("no target state for " + type);
        }
    }

    /** When a record released into {@code next} may go again: NO_BACKOFF unless AVAILABLE with a backoff. */
    private static long backoffEnd(RecordState next, short deliveryCount, ShareConfig cfg, long nowMs) {
        long delay = next == RecordState.AVAILABLE ? cfg.backoff().delayMs(deliveryCount) : 0;
        return delay > 0 ? nowMs + delay : PersistedBatch.NO_BACKOFF;
    }

    /** A record leaving ACQUIRED without a verdict goes back, unless it used its last delivery. */
    private static RecordState releasedState(short deliveryCount, ShareConfig cfg) {
        return deliveryCount >= cfg.deliveryCountLimit() ? cfg.deadState() : RecordState.AVAILABLE;
    }

    // Inspection for tests and diagnostics; null / 0 / null outside the window.
    RecordState stateOf(long offset) {
        return window.contains(offset) ? window.state(offset) : null;
    }

    short deliveryCountOf(long offset) {
        return window.contains(offset) ? window.deliveryCount(offset) : 0;
    }

    String ownerOf(long offset) {
        return window.contains(offset) ? window.owner(offset) : null;
    }

    boolean inTransition(long offset) {
        return window.contains(offset) && window.pending(offset) != null;
    }
}
