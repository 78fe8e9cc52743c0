package io.pier.service;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * The share fetches parked on one share-partition, woken one at a time, longest parked first.
 *
 * <p>Waking every parked fetch whenever anything changed made all of them try, and with few
 * records acquirable (an acknowledgement frees one key of a group ordered by key) all but one
 * found nothing and parked again: most of the broker's CPU went into those attempts. Instead a
 * change wakes one fetch, and every acquisition that leaves work behind wakes the next
 * ({@link ShareService}), so as many fetches try as there is work for, plus at most one.
 *
 * <p>A woken fetch that is answered before it reaches this share-partition (by records of
 * another one) ends the chain early; the next fetch of its consumer, one round trip later,
 * acquires here and starts it again, and MaxWaitMs bounds every wait regardless.
 *
 * <p>It listens on its partition for new records, a moved log start or a deletion, registered
 * only while fetches are parked, so a partition carries one listener per share-partition with
 * waiters rather than one per parked fetch. Shard thread only.
 */
final class ShareWaiters implements Partition.DataListener {
    /** Beyond this many, parked fetches that were answered meanwhile are dropped when one more parks. */
    private static final int PRUNE_AT = 64;

    private final Partition partition;
    /** In parking order; a fetch parks at most once however many of its attempts find nothing. */
    private final LinkedHashSet<Partition.DataListener> parked = new LinkedHashSet<>();
    private boolean listening;

    ShareWaiters(Partition partition) {
        this.partition = partition;
    }

    /** Parks a fetch that found nothing to acquire, until {@link #wakeOne} or a change of the log reaches it. */
    void park(Partition.DataListener wake) {
        if (parked.size() >= PRUNE_AT) {
            parked.removeIf(Partition.DataListener::isDone);
        }
        parked.add(wake);
        listen();
    }

    /** Wakes the longest-parked fetch that still waits; false if none does. */
    boolean wakeOne() {
        Iterator<Partition.DataListener> it = parked.iterator();
        while (it.hasNext()) {
            Partition.DataListener wake = it.next();
            it.remove();
            if (!wake.isDone()) {
                wake.onDataChange();
                return true;
            }
        }
        return false;
    }

    /** Wakes every parked fetch: the share-partition went away, each must find out for itself. */
    void wakeAll() {
        while (wakeOne()) {
            // each woken fetch tries again
        }
    }

    int parkedCount() {
        return parked.size();
    }

    /**
     * Never done: the partition calls this once and forgets it; {@link #listen} registers it
     * again while fetches are parked. Pruning it would leave those fetches to MaxWaitMs.
     */
    @Override
    public boolean isDone() {
        return false;
    }

    /** The log changed: new records (or a moved start) are work for one fetch, which passes on the rest. */
    @Override
    public void onDataChange() {
        listening = false;
        if (partition.isDeleted()) {
            wakeAll();
        } else {
            wakeOne();
        }
        listen();
    }

    private void listen() {
        if (!listening && !parked.isEmpty()) {
            listening = true;
            partition.onNextDataChange(this);
        }
    }
}
