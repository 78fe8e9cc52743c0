package io.pier.log;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;

/**
 * Idempotent-producer state of one partition: per producer id, its epoch and its last
 * {@value #RETAINED_BATCHES} batches, enough to recognise a retried batch and to reject gaps.
 * Rebuilt from batch headers on open, so it needs no file of its own. Owned by the log's thread.
 */
final class ProducerStateTable {
    /** Kafka producers keep at most five requests in flight, so five batches cover any retry. */
    static final int RETAINED_BATCHES = 5;

    /** One appended batch of a producer. */
    record BatchMetadata(int firstSeq, int lastSeq, long firstOffset, long lastOffset) {}

    private static final class Entry {
        short epoch;
        final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(RETAINED_BATCHES);

        Entry(short epoch) {
            this.epoch = epoch;
        }
    }

    private final Map<Long, Entry> producers = new HashMap<>();

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

    /** Records an appended batch (also used to replay the log on open, without checks). */
    void record(long producerId, short epoch, int firstSeq, int lastSeq, long firstOffset, long lastOffset) {
        Entry e = producers.get(producerId);
        if (e == null || epoch > e.epoch) {
            e = new Entry(epoch);
            producers.put(producerId, e);
        }
        if (e.batches.size() == RETAINED_BATCHES) {
            e.batches.removeFirst();
        }
        e.batches.addLast(new BatchMetadata(firstSeq, lastSeq, firstOffset, lastOffset));
    }

    /**
     * Forgets producers whose batches all lie below the new log start offset. A reopened log
     * could not know them either, so forgetting keeps behaviour the same across restarts.
     */
    void retainFrom(long logStartOffset) {
        Iterator<Entry> it = producers.values().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (e.batches.isEmpty() || e.batches.peekLast().lastOffset < logStartOffset) {
                it.remove();
            }
        }
    }

    int size() {
        return producers.size();
    }
}
