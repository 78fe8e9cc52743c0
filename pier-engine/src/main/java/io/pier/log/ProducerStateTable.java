package io.pier.log;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;

/**
 * Idempotent and transactional producer state of one partition: per producer id, its epoch, its
 * last {@value #RETAINED_BATCHES} batches (enough to recognise a retried batch and to reject
 * gaps), the coordinator epoch of its last marker and the first offset of its ongoing
 * transaction. Rebuilt from batch headers (and the keys of control batches) on open, so it needs
 * no file of its own. Owned by the log's thread.
 *
 * <p>Invariant: {@link #firstUnstableOffset()} is the smallest first offset of the ongoing
 * transactions, each of which started with a transactional batch after its producer's previous
 * end marker.
 */
final class ProducerStateTable {
    /** Kafka producers keep at most five requests in flight, so five batches cover any retry. */
    static final int RETAINED_BATCHES = 5;

    /** One appended batch of a producer. */
    record BatchMetadata(int firstSeq, int lastSeq, long firstOffset, long lastOffset) {}

    private static final class Entry {
        short epoch;
        final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(RETAINED_BATCHES);
        int coordinatorEpoch = -1;
        /** First offset of the ongoing transaction, -1 when none. */
        long txnFirstOffset = -1;
        /** Producer epoch of the ongoing transaction's first batch, -1 when none. */
        short txnEpoch = -1;
        /** Last offset of this producer's newest batch or marker. */
        long lastOffset = -1;
        /** Largest timestamp of the newest batch, or the newest marker's time; -1 when unknown. */
        long lastTimestampMs = -1;

        Entry(short epoch) {
            this.epoch = epoch;
        }

        /** A newer epoch starts a new sequence space; an ongoing transaction stays until its marker. */
        void moveToEpoch(short newEpoch) {
            if (newEpoch != epoch) {
                epoch = newEpoch;
                batches.clear();
            }
        }
    }

    private final Map<Long, Entry> producers = new HashMap<>();
    /** Ongoing transactions: first offset to producer id. Offsets are unique, so are the keys. */
    private final TreeMap<Long, Long> ongoing = new TreeMap<>();
    /**
     * Transactions whose marker is appended but maybe not yet below the high watermark, in marker
     * order: until it is, a crash may lose the marker, so they still hold the last stable offset
     * back (Kafka's unreplicated transactions).
     */
    private final ArrayDeque<long[]> endedNotVisible = new ArrayDeque<>();

    /**
     * Checks a batch before it is appended. Returns the original batch when this one is a retry
     * of it, null when the batch is new and may be appended.
     *
     * @throws InvalidProducerEpochException if the epoch is older than the producer's current one
     * @throws OutOfOrderSequenceException if the sequence does not follow on
     */
    BatchMetadata check(long producerId, short epoch, int firstSeq, int lastSeq) {
        Entry e = producers.get(producerId);
        if (e == null) {
            return null; // as in Kafka: a producer the log does not know may start anywhere
        }
        if (epoch < e.epoch) {
            throw new InvalidProducerEpochException("producer " + producerId + " sent epoch " + epoch
                    + " but the current epoch is " + e.epoch);
        }
        if (epoch > e.epoch) {
            if (firstSeq != 0) {
                throw new OutOfOrderSequenceException("producer " + producerId + " bumped its epoch to " + epoch
                        + " but started at sequence " + firstSeq + " instead of 0");
            }
            return null;
        }
        for (BatchMetadata b : e.batches) {
            if (b.firstSeq == firstSeq && b.lastSeq == lastSeq) {
                return b;
            }
        }
        BatchMetadata last = e.batches.peekLast();
        if (last != null) {
            int expected = last.lastSeq == Integer.MAX_VALUE ? 0 : last.lastSeq + 1;
            if (firstSeq != expected) {
                throw new OutOfOrderSequenceException("producer " + producerId + " epoch " + epoch + " sent sequence "
                        + firstSeq + " but " + expected + " was expected");
            }
        }
        return null;
    }

    /**
     * Records an appended batch (also used to replay the log on open, without checks). A
     * transactional batch starts its producer's transaction unless one is already ongoing.
     *
     * <p>Returns the first offset of the ongoing transaction when a transactional batch of a
     * newer epoch joins it, else -1. That should not happen: every epoch bump of a transactional
     * producer ends (or fences and aborts) its transaction, so a marker at the bumped epoch lies
     * between. Without that marker the old transaction's records become part of the new one and
     * share its outcome (an aborted transaction's records committed with the next one, or a
     * committed one's dropped), so the caller reports it.
     */
    long record(long producerId, short epoch, int firstSeq, int lastSeq, long firstOffset, long lastOffset,
            boolean transactional) {
        Entry e = producers.computeIfAbsent(producerId, id -> new Entry(epoch));
        long joinedOlder = transactional && e.txnFirstOffset >= 0 && epoch > e.txnEpoch ? e.txnFirstOffset : -1;
        if (epoch > e.epoch) {
            e.moveToEpoch(epoch);
        }
        if (e.batches.size() == RETAINED_BATCHES) {
            e.batches.removeFirst();
        }
        e.batches.addLast(new BatchMetadata(firstSeq, lastSeq, firstOffset, lastOffset));
        e.lastOffset = lastOffset;
        if (joinedOlder >= 0) {
            e.txnEpoch = epoch; // reported once, not again for each later batch of the newer epoch
        }
        if (transactional && e.txnFirstOffset < 0) {
            e.txnFirstOffset = firstOffset;
            e.txnEpoch = epoch;
            ongoing.put(firstOffset, producerId);
        }
        return joinedOlder;
    }

    /**
     * Checks an end-transaction marker before it is appended, as Kafka's ProducerAppendInfo does:
     * a marker from an older producer epoch, or from an older coordinator epoch, is fenced.
     * Transaction version 2 bumps the epoch for every marker, so there the marker's epoch must be
     * strictly newer. A producer the log does not know passes: its marker is written, harmlessly.
     *
     * @throws InvalidProducerEpochException if the marker's producer epoch is stale
     * @throws TransactionCoordinatorFencedException if its coordinator epoch is older than the last one
     */
    void checkMarker(long producerId, short epoch, int coordinatorEpoch, short transactionVersion) {
        Entry e = producers.get(producerId);
        if (e == null) {
            return;
        }
        boolean stale = transactionVersion >= 2 ? epoch <= e.epoch : epoch < e.epoch;
        if (stale) {
            throw new InvalidProducerEpochException("marker of producer " + producerId + " has epoch " + epoch
                    + " but the current epoch is " + e.epoch + " (transaction version " + transactionVersion + ")");
        }
        if (coordinatorEpoch < e.coordinatorEpoch) {
            throw new TransactionCoordinatorFencedException("marker of producer " + producerId
                    + " has coordinator epoch " + coordinatorEpoch + " but " + e.coordinatorEpoch + " wrote the last one");
        }
    }

    /**
     * Records an appended end-transaction marker at {@code markerOffset} (also used on replay):
     * the producer's ongoing transaction ends. Returns that transaction's first offset, or -1 if
     * none was ongoing.
     */
    long endTransaction(long producerId, short epoch, int coordinatorEpoch, long markerOffset) {
        Entry e = producers.computeIfAbsent(producerId, id -> new Entry(epoch));
        if (epoch > e.epoch) {
            e.moveToEpoch(epoch);
        }
        e.coordinatorEpoch = coordinatorEpoch;
        e.lastOffset = markerOffset;
        long first = e.txnFirstOffset;
        if (first >= 0) {
            ongoing.remove(first);
            e.txnFirstOffset = -1;
            e.txnEpoch = -1;
            endedNotVisible.addLast(new long[] {first, markerOffset});
        }
        return first;
    }

    /**
     * The smallest first offset of the transactions not known to have ended below
     * {@code highWatermark} (ongoing, or with their marker at or above it), or -1 if there is none.
     */
    long firstUnstableOffset(long highWatermark) {
        while (!endedNotVisible.isEmpty() && endedNotVisible.peekFirst()[1] < highWatermark) {
            endedNotVisible.removeFirst();
        }
        long first = ongoing.isEmpty() ? Long.MAX_VALUE : ongoing.firstKey();
        for (long[] t : endedNotVisible) {
            first = Math.min(first, t[0]);
        }
        return first == Long.MAX_VALUE ? -1 : first;
    }

    /**
     * Records the timestamp of what {@link #record} or {@link #endTransaction} just recorded for
     * {@code producerId}: the batch's largest timestamp, or the marker's append time.
     */
    void recordTimestamp(long producerId, long timestampMs) {
        Entry e = producers.get(producerId);
        if (e != null) {
            e.lastTimestampMs = timestampMs;
        }
    }

    /** A copy of every known producer's state, by producer id (DescribeProducers). */
    List<ActiveProducer> activeProducers() {
        List<ActiveProducer> out = new ArrayList<>(producers.size());
        producers.forEach((id, e) -> {
            BatchMetadata last = e.batches.peekLast();
            out.add(new ActiveProducer(id, e.epoch, last == null ? -1 : last.lastSeq, e.lastTimestampMs,
                    e.coordinatorEpoch, e.txnFirstOffset));
        });
        out.sort((a, b) -> Long.compare(a.producerId(), b.producerId()));
        return out;
    }

    /** Number of ongoing transactions. */
    int ongoingTransactions() {
        return ongoing.size();
    }

    /**
     * Forgets producers whose batches and markers all lie below the new log start offset. A
     * reopened log could not know them either, so forgetting keeps behaviour the same across
     * restarts. A producer with an ongoing transaction stays: its marker is still to come, and the
     * log keeps the segment where the transaction began (see {@link PartitionLog}).
     */
    void retainFrom(long logStartOffset) {
        Iterator<Entry> it = producers.values().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (e.txnFirstOffset < 0 && e.lastOffset < logStartOffset) {
                it.remove();
            }
        }
    }

    /** Forgets every producer, for a log emptied and started afresh (a mirror's restart). */
    void clear() {
        producers.clear();
        ongoing.clear();
        endedNotVisible.clear();
    }

    int size() {
        return producers.size();
    }
}
