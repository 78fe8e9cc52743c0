package io.pier.share;

import java.util.Arrays;

/**
 * Per-offset delivery state of the in-flight window {@code [startOffset, endExclusive)} of one
 * share-partition, stored as parallel arrays used as a sliding buffer. Offset {@code startOffset}
 * (the SPSO) is always the first slot, so advancing the SPSO is dropping slots from the front.
 *
 * <p>Every state change goes through {@link #changeState}, which checks the move against
 * {@link RecordState#canTransitionTo}, keeps the per-state counts, notes whether a record
 * became acquirable and tells the {@link ShareEvents} listener. Each offset also keeps the
 * monotonic time it entered the window, for the age of the oldest unsettled record. An offset may also carry a <em>pending</em> change: an acknowledgement or
 * release whose write is not yet durable. Its state stays ACQUIRED until the change commits; it
 * cannot be acquired or acknowledged meanwhile. A pending ACQUIRED offset whose lock fired (or
 * whose member was released) keeps a null lock, so a rollback knows to make it available.
 *
 * <p>Single owner; not thread-safe.
 */
final class InFlightWindow {
    private static final RecordState[] BY_ORDINAL = RecordState.values();
    private static final byte NO_TARGET = -1;
    static final long NO_BACKOFF = io.pier.state.PersistedBatch.NO_BACKOFF;

    private long startOffset;
    private int head;
    private int size;
    private byte[] states = new byte[16];
    private short[] counts = new short[16];
    private String[] owners = new String[16];
    private AcquisitionLock[] locks = new AcquisitionLock[16];
    private PendingChange[] pendings = new PendingChange[16];
    private byte[] targets = new byte[16];
    private long[] enteredMs = new long[16];
    /**
     * An AVAILABLE record in backoff is not acquired before this monotonic time; while ACQUIRED
     * with a release in flight, the time it will wait once released. NO_BACKOFF otherwise.
     */
    private long[] notBefore = newNotBefore(16);
    /** AVAILABLE records in backoff, and when each may go again (stale entries are skipped). */
    private int inBackoff;
    private final java.util.PriorityQueue<long[]> backoffEnds =
            new java.util.PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    /** The key of each record (a hash, {@link KeyOrder#NO_KEY} if none), kept while ordering by key. */
    private long[] keys = new long[16];
    /** Per-key order, while the group orders by key ({@code pier.share.ordering=key}); else null. */
    private KeyOrder keyOrder;
    /** Records below this offset have no known key yet (ordering just turned on, or the state loaded). */
    private long keysUnknownUpTo;
    /** Why an ARCHIVING record died (a {@link ChangeCause} ordinal), or NO_TARGET when loaded so. */
    private byte[] deaths = new byte[16];
    private final int[] countByState = new int[BY_ORDINAL.length];
    private long availableHint = Long.MAX_VALUE;
    private boolean becameAcquirable;
    private final ShareEvents events;

    InFlightWindow(long startOffset, ShareEvents events) {
        this.startOffset = startOffset;
        this.events = events;
    }

    long startOffset() {
        return startOffset;
    }

    long endExclusive() {
        return startOffset + size;
    }

    int size() {
        return size;
    }

    boolean contains(long offset) {
        return offset >= startOffset && offset < startOffset + size;
    }

    RecordState state(long offset) {
        return BY_ORDINAL[states[slot(offset)]];
    }

    short deliveryCount(long offset) {
        return counts[slot(offset)];
    }

    String owner(long offset) {
        return owners[slot(offset)];
    }

    AcquisitionLock lock(long offset) {
        return locks[slot(offset)];
    }

    PendingChange pending(long offset) {
        return pendings[slot(offset)];
    }

    /** What made an ARCHIVING record die, or null if it was loaded in that state. */
    ChangeCause deathCause(long offset) {
        byte d = deaths[slot(offset)];
        return d == NO_TARGET ? null : ChangeCause.forOrdinal(d);
    }

    int count(RecordState state) {
        return countByState[state.ordinal()];
    }

    /** Whether the offset is AVAILABLE, not in backoff, with no change in flight: what acquisition may take. */
    boolean isAcquirable(long offset) {
        int s = slot(offset);
        if (states[s] != RecordState.AVAILABLE.ordinal() || pendings[s] != null || notBefore[s] != NO_BACKOFF) {
            return false;
        }
        // Ordered by key: only the first unsettled record of its key, and only once its key is known.
        return keyOrder == null || (offset >= keysUnknownUpTo && keyOrder.isFirstOfKey(offset, keys[s]));
    }

    /** AVAILABLE records that acquisition may take now. */
    int acquirableCount() {
        return keyOrder != null ? keyOrder.readyCount() : countByState[RecordState.AVAILABLE.ordinal()] - inBackoff;
    }

    // Ordering by key ------------------------------------------------------------------------

    /**
     * Turns ordering by key on or off. Turned on, the keys of the records already in the window
     * are unknown until {@link #learnKeys}; none of them is acquired before.
     */
    void orderByKey(boolean on) {
        if (on == (keyOrder != null)) {
            return;
        }
        keyOrder = on ? new KeyOrder(startOffset) : null;
        keysUnknownUpTo = on ? endExclusive() : 0;
        if (!on) {
            becameAcquirable = true; // blocked records may go now
        }
    }

    boolean ordersByKey() {
        return keyOrder != null;
    }

    /** The end (exclusive) of the records whose keys are to be learned from the window start; 0 if none. */
    long keysUnknownUpTo() {
        return keyOrder == null || keysUnknownUpTo <= startOffset ? 0 : keysUnknownUpTo;
    }

    /** Learns the keys of the records from the window start to {@link #keysUnknownUpTo}. */
    void learnKeys(RecordKeys recordKeys) {
        long upTo = keysUnknownUpTo();
        if (upTo == 0) {
            return;
        }
        for (long o = upTo - 1; o >= startOffset; o--) {
            int s = slot(o);
            keys[s] = recordKeys.keyOf(o);
            if (!BY_ORDINAL[states[s]].isTerminal()) {
                keyOrder.open(o, keys[s]);
            }
        }
        keysUnknownUpTo = startOffset;
        for (long o = startOffset; o < upTo; o++) {
            refreshReady(o);
        }
        becameAcquirable = true;
    }

    /** When a record in the window entered it (monotonic ms). */
    long enteredMs(long offset) {
        return enteredMs[slot(offset)];
    }

    /** Whether {@code key} has a record in the window not settled for good (a later record of it must wait). */
    boolean isKeyOpen(long key) {
        return keyOrder != null && keyOrder.isOpen(key);
    }

    /** The first offset at or after {@code from} that acquisition may take, or -1; ordering by key only. */
    long nextReady(long from) {
        return keyOrder.nextReady(from);
    }

    /** Keys with a record waiting behind an earlier one of theirs; 0 when not ordering by key. */
    int blockedKeys() {
        return keyOrder == null ? 0 : keyOrder.blockedKeys();
    }

    /** The lowest offset waiting behind an earlier record of its key, or -1. */
    long oldestBlockedOffset() {
        return keyOrder == null ? -1 : keyOrder.oldestBlockedOffset();
    }

    private void refreshReady(long offset) {
        if (keyOrder != null && contains(offset)) {
            keyOrder.ready(offset, isAcquirable(offset));
        }
    }

    /** AVAILABLE records waiting for their backoff to end. */
    int inBackoff() {
        return inBackoff;
    }

    /** When the first backoff ends, or {@link Long#MAX_VALUE} if no record is in backoff. */
    long nextBackoffEndMs() {
        while (!backoffEnds.isEmpty() && !isBackoffEntryLive(backoffEnds.peek())) {
            backoffEnds.poll();
        }
        return backoffEnds.isEmpty() ? Long.MAX_VALUE : backoffEnds.peek()[0];
    }

    /** Ends the backoffs due at {@code nowMs}: those records may be acquired (and fetches are woken). */
    int endBackoffs(long nowMs) {
        int ended = 0;
        while (!backoffEnds.isEmpty() && backoffEnds.peek()[0] <= nowMs) {
            long[] e = backoffEnds.poll();
            if (isBackoffEntryLive(e)) {
                int s = slot(e[1]);
                notBefore[s] = NO_BACKOFF;
                inBackoff--;
                noteAvailable(e[1]);
                refreshReady(e[1]);
                ended++;
            }
        }
        return ended;
    }

    private boolean isBackoffEntryLive(long[] e) {
        if (!contains(e[1])) {
            return false;
        }
        int s = slot(e[1]);
        return states[s] == RecordState.AVAILABLE.ordinal() && notBefore[s] == e[0];
    }

    /** Appends offset {@code endExclusive()} in {@code state} with a delivery count, entering at {@code nowMs}. */
    void append(RecordState state, short deliveryCount, long nowMs) {
        append(state, deliveryCount, nowMs, NO_BACKOFF);
    }

    /**
     * As {@link #append(RecordState, short, long)}; an AVAILABLE record with a {@code notBeforeMs}
     * later than {@code nowMs} waits in backoff until then.
     */
    void append(RecordState state, short deliveryCount, long nowMs, long notBeforeMs) {
        append(state, deliveryCount, nowMs, notBeforeMs, KeyOrder.NO_KEY);
    }

    /** As {@link #append(RecordState, short, long, long)}, for a record with {@code key} (a hash). */
    void append(RecordState state, short deliveryCount, long nowMs, long notBeforeMs, long key) {
        if (state == RecordState.ACQUIRED) {
            throw new IllegalArgumentException("records enter the window unowned");
        }
        ensureCapacity(size + 1);
        int s = head + size;
        states[s] = (byte) state.ordinal();
        counts[s] = deliveryCount;
        targets[s] = NO_TARGET;
        deaths[s] = NO_TARGET;
        enteredMs[s] = nowMs;
        notBefore[s] = NO_BACKOFF;
        keys[s] = key;
        size++;
        countByState[state.ordinal()]++;
        long offset = endExclusive() - 1;
        if (keyOrder != null && !state.isTerminal()) {
            keyOrder.open(offset, key);
        }
        if (state == RecordState.AVAILABLE) {
            if (notBeforeMs != NO_BACKOFF && notBeforeMs > nowMs) {
                startBackoff(s, offset, notBeforeMs);
            } else {
                noteAvailable(offset);
            }
        }
        refreshReady(offset);
    }

    /** AVAILABLE to ACQUIRED by a member under a lock; the delivery count goes up by one. */
    void acquire(long offset, String memberId, AcquisitionLock lock) {
        int s = slot(offset);
        if (pendings[s] != null) {
            throw new IllegalStateException("offset " + offset + " has a change in flight");
        }
        changeState(s, offset, RecordState.ACQUIRED, ChangeCause.ACQUIRE);
        owners[s] = memberId;
        setLock(s, lock);
    }

    /** Moves an offset out of ACQUIRED (or archives an AVAILABLE one); owner and lock go. */
    void settle(long offset, RecordState next, ChangeCause cause) {
        int s = slot(offset);
        changeState(s, offset, next, cause);
        owners[s] = null;
        setLock(s, null);
    }

    void setLock(long offset, AcquisitionLock lock) {
        setLock(slot(offset), lock);
    }

    void markPending(long offset, PendingChange change, RecordState target) {
        markPending(offset, change, target, NO_BACKOFF);
    }

    /** As {@link #markPending(long, PendingChange, RecordState)}; once AVAILABLE the record waits until {@code notBeforeMs}. */
    void markPending(long offset, PendingChange change, RecordState target, long notBeforeMs) {
        int s = slot(offset);
        pendings[s] = change;
        targets[s] = (byte) target.ordinal();
        notBefore[s] = notBeforeMs;
    }

    void clearPending(long offset) {
        int s = slot(offset);
        pendings[s] = null;
        targets[s] = NO_TARGET;
        notBefore[s] = NO_BACKOFF;
    }

    /** As {@link #settle}, the record then waiting in backoff until {@code notBeforeMs} if it becomes AVAILABLE. */
    void settle(long offset, RecordState next, ChangeCause cause, long notBeforeMs) {
        notBefore[slot(offset)] = notBeforeMs;
        settle(offset, next, cause);
    }

    /**
     * Commits the change in flight at {@code offset} if it is {@code change}'s: the record moves to
     * the change's target state, its owner and lock go. Nothing happens to an offset no longer in
     * the window or carrying another change.
     */
    void settlePending(long offset, PendingChange change, ChangeCause cause) {
        if (!contains(offset)) {
            return;
        }
        int s = slot(offset);
        if (pendings[s] != change) {
            return;
        }
        RecordState target = BY_ORDINAL[targets[s]];
        pendings[s] = null;
        targets[s] = NO_TARGET;
        changeState(s, offset, target, cause);
        owners[s] = null;
        setLock(s, null);
    }

    /**
     * How many offsets at the front are terminal or carry a change in flight that makes them so
     * (an ACCEPT or REJECT being written): how far the start offset moves once those writes are
     * durable. Acquisition counts them as already gone, so that a fetch acquiring while its own
     * acknowledgements are written is not held back by them.
     */
    int settlingFront() {
        int n = 0;
        while (n < size) {
            int s = head + n;
            boolean settling = pendings[s] == null
                    ? BY_ORDINAL[states[s]].isTerminal()
                    : targets[s] != NO_TARGET && BY_ORDINAL[targets[s]].isTerminal();
            if (!settling) {
                break;
            }
            n++;
        }
        return n;
    }

    /** Drops terminal offsets without a change in flight from the front. */
    void advanceOverTerminal() {
        int n = 0;
        while (n < size) {
            int s = head + n;
            RecordState st = BY_ORDINAL[states[s]];
            if (!st.isTerminal() || pendings[s] != null) {
                break;
            }
            n++;
        }
        dropFront(n);
    }

    /**
     * Forgets every offset below {@code newStart}, whatever its state; may empty the window. The
     * records below it that were not settled, in the window or past it, are told as archived;
     * ARCHIVING ones are not, they were told when they died.
     */
    void dropBefore(long newStart) {
        if (newStart <= startOffset) {
            return;
        }
        long n = Math.min(size, newStart - startOffset);
        long settled = 0;
        long deadLettersLost = 0;
        for (int i = 0; i < n; i++) {
            RecordState st = BY_ORDINAL[states[head + i]];
            if (st.isTerminal() || st == RecordState.ARCHIVING) {
                settled++;
            }
            if (st == RecordState.ARCHIVING && pendings[head + i] == null) {
                deadLettersLost++; // gone from the log before its dead letter was taken: it gets none
            }
        }
        long lost = newStart - startOffset - settled;
        if (lost > 0) {
            events.onArchived(ShareEvents.ArchiveCause.LOG_START, lost);
        }
        if (deadLettersLost > 0) {
            events.onDeadLetters(0, deadLettersLost);
        }
        dropFront((int) n);
        startOffset = newStart;
        availableHint = Math.max(availableHint, startOffset);
    }

    /** First acquirable offset at or after the SPSO, or {@code endExclusive()} if none. */
    long firstAcquirableOffset() {
        if (acquirableCount() == 0) {
            return endExclusive();
        }
        if (keyOrder != null) {
            long next = keyOrder.nextReady(startOffset);
            return next < 0 ? endExclusive() : next;
        }
        long from = Math.max(availableHint, startOffset);
        if (from >= endExclusive()) {
            from = startOffset;
        }
        long found = scanAvailable(from);
        if (found == endExclusive() && from > startOffset) {
            found = scanAvailable(startOffset);
        }
        availableHint = found;
        return found;
    }

    private long scanAvailable(long from) {
        for (long o = from; o < endExclusive(); o++) {
            if (isAcquirable(o)) {
                return o;
            }
        }
        return endExclusive();
    }

    /** Tells the listener how many dead records left ARCHIVING with and without their dead letter. */
    void tellDeadLetters(long written, long failed) {
        events.onDeadLetters(written, failed);
    }

    /** Returns and clears the flag set when a record became AVAILABLE or the window shrank. */
    boolean consumeBecameAcquirable() {
        boolean b = becameAcquirable;
        becameAcquirable = false;
        return b;
    }

    void noteWindowShrank() {
        becameAcquirable = true;
    }

    /**
     * Monotonic time the oldest AVAILABLE, ACQUIRED or ARCHIVING record entered the window, or
     * {@link Long#MAX_VALUE} if there is none. Entry times ascend with offsets, so it is the
     * first unsettled offset's.
     */
    long oldestUnsettledEnteredMs() {
        if (countByState[RecordState.AVAILABLE.ordinal()] + countByState[RecordState.ACQUIRED.ordinal()]
                + countByState[RecordState.ARCHIVING.ordinal()] == 0) {
            return Long.MAX_VALUE;
        }
        for (int i = 0; i < size; i++) {
            if (!BY_ORDINAL[states[head + i]].isTerminal()) {
                return enteredMs[head + i];
            }
        }
        return Long.MAX_VALUE;
    }

    /** The checked move of one offset; acquiring counts a delivery. Tells the listener. */
    private void changeState(int s, long offset, RecordState next, ChangeCause cause) {
        RecordState current = BY_ORDINAL[states[s]];
        if (!current.canTransitionTo(next)) {
            throw new IllegalStateException(
                    "illegal transition " + current + " -> " + next + " at offset " + offset);
        }
        if (current == RecordState.AVAILABLE && notBefore[s] != NO_BACKOFF) {
            inBackoff--; // leaves AVAILABLE while waiting (archived): its heap entry goes stale
            notBefore[s] = NO_BACKOFF;
        }
        states[s] = (byte) next.ordinal();
        countByState[current.ordinal()]--;
        countByState[next.ordinal()]++;
        if (next == RecordState.ACQUIRED) {
            counts[s]++;
        }
        if (next == RecordState.AVAILABLE) {
            if (notBefore[s] != NO_BACKOFF) {
                startBackoff(s, offset, notBefore[s]);
            } else {
                noteAvailable(offset);
            }
        } else {
            notBefore[s] = NO_BACKOFF;
        }
        if (next == RecordState.ARCHIVING) {
            deaths[s] = (byte) cause.ordinal();
        }
        if (keyOrder != null) {
            if (next.isTerminal() && offset >= keysUnknownUpTo) { // below it, never opened
                long nextOfKey = keyOrder.close(offset, keys[s]);
                if (nextOfKey >= 0) {
                    refreshReady(nextOfKey);
                    if (isAcquirable(nextOfKey)) {
                        noteAvailable(nextOfKey); // its key is free: wake the fetches waiting
                    }
                }
            }
            refreshReady(offset);
        }
        tell(cause, next, counts[s]);
    }

    private void tell(ChangeCause cause, RecordState next, int deliveryCount) {
        switch (cause) {
            case ACQUIRE:
                events.onAcquired(deliveryCount);
                return;
            case ACCEPT:
                events.onAccepted(deliveryCount);
                return;
            case REJECT:
                events.onRejected(deliveryCount);
                events.onArchived(ShareEvents.ArchiveCause.REJECTED, 1);
                return;
            case RELEASE:
                events.onReleased(deliveryCount);
                break;
            case LOCK_EXPIRY:
                events.onLockExpired(deliveryCount);
                break;
            case MEMBER_RELEASE:
                events.onMemberReleased(deliveryCount);
                break;
            case LIMIT_LOWERED:
            case ROLLBACK:
                break;
            case GAP:
            case MISSING_FROM_LOG:
            case ABORTED:
            case DEAD_LETTERED:
            default:
                return; // not records, records no consumer of the group may get, or counted when they died
        }
        if (next == RecordState.ARCHIVED || next == RecordState.ARCHIVING) {
            events.onArchived(ShareEvents.ArchiveCause.DELIVERY_LIMIT, 1);
        }
    }

    private void startBackoff(int s, long offset, long notBeforeMs) {
        notBefore[s] = notBeforeMs;
        inBackoff++;
        backoffEnds.add(new long[] {notBeforeMs, offset});
        refreshReady(offset);
    }

    private void noteAvailable(long offset) {
        becameAcquirable = true;
        if (offset < availableHint) {
            availableHint = offset;
        }
    }

    private void setLock(int s, AcquisitionLock lock) {
        AcquisitionLock old = locks[s];
        if (old == lock) {
            return;
        }
        if (old != null) {
            old.liveOffsets--;
        }
        if (lock != null) {
            lock.liveOffsets++;
        }
        locks[s] = lock;
    }

    private void dropFront(int n) {
        long[] nextOfKeys = keyOrder == null ? null : new long[n];
        for (int i = 0; i < n; i++) {
            int s = head + i;
            if (keyOrder != null) {
                long offset = startOffset + i;
                keyOrder.ready(offset, false);
                boolean opened = !BY_ORDINAL[states[s]].isTerminal() && offset >= keysUnknownUpTo;
                nextOfKeys[i] = opened ? keyOrder.close(offset, keys[s]) : -1;
            }
            countByState[states[s]]--;
            if (states[s] == RecordState.AVAILABLE.ordinal() && notBefore[s] != NO_BACKOFF) {
                inBackoff--;
            }
            notBefore[s] = NO_BACKOFF;
            setLock(s, null);
            owners[s] = null;
            pendings[s] = null;
            targets[s] = NO_TARGET;
        }
        head += n;
        size -= n;
        startOffset += n;
        if (size == 0) {
            head = 0;
        }
        if (n > 0) {
            noteWindowShrank();
        }
        if (nextOfKeys != null) {
            for (long next : nextOfKeys) {
                if (next >= 0) {
                    refreshReady(next);
                }
            }
            keyOrder.forgetBelow(startOffset);
        }
    }

    private static long[] newNotBefore(int capacity) {
        long[] a = new long[capacity];
        Arrays.fill(a, NO_BACKOFF);
        return a;
    }

    private int slot(long offset) {
        if (!contains(offset)) {
            throw new IndexOutOfBoundsException(
                    "offset " + offset + " outside [" + startOffset + ", " + endExclusive() + ")");
        }
        return head + (int) (offset - startOffset);
    }

    private void ensureCapacity(int needed) {
        if (head + needed <= states.length) {
            return;
        }
        int capacity = states.length;
        if (needed > capacity / 2) {
            capacity = Math.max(needed * 2, capacity * 2);
        }
        states = shift(states, capacity);
        counts = shift(counts, capacity);
        owners = shift(owners, capacity);
        locks = shift(locks, capacity);
        pendings = shift(pendings, capacity);
        targets = shift(targets, capacity);
        enteredMs = shift(enteredMs, capacity);
        deaths = shift(deaths, capacity);
        keys = shift(keys, capacity);
        long[] movedNotBefore = newNotBefore(capacity);
        System.arraycopy(notBefore, head, movedNotBefore, 0, size);
        notBefore = movedNotBefore;
        head = 0;
    }

    private byte[] shift(byte[] a, int capacity) {
        byte[] b = new byte[capacity];
        System.arraycopy(a, head, b, 0, size);
        return b;
    }

    private long[] shift(long[] a, int capacity) {
        long[] b = new long[capacity];
        System.arraycopy(a, head, b, 0, size);
        return b;
    }

    private short[] shift(short[] a, int capacity) {
        short[] b = new short[capacity];
        System.arraycopy(a, head, b, 0, size);
        return b;
    }

    private <T> T[] shift(T[] a, int capacity) {
        T[] b = Arrays.copyOf(a, capacity);
        System.arraycopy(a, head, b, 0, size);
        Arrays.fill(b, size, capacity, null);
        return b;
    }
}
