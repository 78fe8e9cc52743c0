package io.pier.service;

import io.pier.log.PartitionLog;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * After a restart, a takeover or an append whose outcome is not known: which letters of records
 * still ARCHIVING a dead-letter queue partition holds already (see {@link DeadLetters}). Every
 * batch of letters a share-partition appended before those was recorded ARCHIVED, so they sit in
 * the share-partition's trailing letters in that partition, all of them candidates; the search
 * reads backwards from the end, in stretches that double in size, and stops at the first batch of
 * the share-partition holding any other letter, or at the log start.
 */
public final class DeadLetterLookup {
    private static final int READ_BYTES = 1 << 20;
    private static final long FIRST_STRETCH = 1_000;
    private static final long MAX_STRETCH = 1_000_000;

    private DeadLetterLookup() {}

    /** Reads one stretch of a queue partition. */
    @FunctionalInterface
    public interface Stretch {
        /**
         * The share-partition's letter ids in each batch (or record) starting in [{@code from},
         * {@code end}), in log order (the first may start before {@code from}); batches without any
         * left out.
         */
        List<Set<String>> lettersIn(long from, long end) throws IOException;
    }

    /**
     * @param start the partition's log start offset
     * @param end its high watermark: what is past it is not durable yet
     * @param candidates the letters (offset:deliveryCount, {@link DeadLetterRecords#idOf}) of the
     *     records the share-partition holds ARCHIVING
     * @return those of them the partition holds
     */
    public static Set<String> inQueue(long start, long end, Stretch read, Set<String> candidates) throws IOException {
        Set<String> found = new HashSet<>();
        long stretch = FIRST_STRETCH;
        while (end > start) {
            long from = Math.max(start, end - stretch);
            List<Set<String>> ours = read.lettersIn(from, end);
            for (int i = ours.size() - 1; i >= 0; i--) {
                if (!candidates.containsAll(ours.get(i))) {
                    return found;
                }
                found.addAll(ours.get(i));
            }
            end = from;
            stretch = Math.min(stretch * 2, MAX_STRETCH);
        }
        return found;
    }

    /** {@link #inQueue} on a broker's own log, up to its high watermark. */
    static Set<String> inQueue(PartitionLog log, String groupId, TopicPartition source, Set<String> candidates)
            throws IOException {
        return inQueue(log.logStartOffset(), log.highWatermark(),
                (from, end) -> lettersIn(log, from, end, groupId, source), candidates);
    }

    private static List<Set<String>> lettersIn(PartitionLog log, long from, long end, String groupId,
            TopicPartition source) throws IOException {
        List<Set<String>> ours = new ArrayList<>();
        long position = from;
        while (position < end) {
            MemoryRecords read = log.read(position, READ_BYTES, true).records();
            if (read.sizeInBytes() == 0) {
                break;
            }
            for (RecordBatch b : read.batches()) {
                if (b.baseOffset() >= end) {
                    return ours;
                }
                Set<String> letters = DeadLetterRecords.lettersOf(b, groupId, source);
                if (!letters.isEmpty()) {
                    ours.add(letters);
                }
                position = b.nextOffset();
            }
        }
        return ours;
    }
}
