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
 * After a restart: which letters of records loaded ARCHIVING a dead-letter queue partition holds
 * already (see {@link DeadLetters}). Every batch of letters a share-partition appended before those
 * records was recorded ARCHIVED, so they sit in the share-partition's trailing record batches of
 * that partition whose letters all belong to such records; the search reads backwards from the end,
 * in stretches that double in size, and stops at the first batch of the share-partition holding any
 * other letter, or at the log start.
 */
final class DeadLetterLookup {
    private static final int READ_BYTES = 1 << 20;
    private static final long FIRST_STRETCH = 1_000;
    private static final long MAX_STRETCH = 1_000_000;

    private DeadLetterLookup() {}

    /**
     * @param candidates the letters (offset:deliveryCount, {@link DeadLetterRecords#idOf}) of the
     *     records {@code source}'s share-partition of {@code groupId} loaded ARCHIVING
     * @return those of them the partition holds
     */
    static Set<String> inQueue(PartitionLog log, String groupId, TopicPartition source, Set<String> candidates)
            throws IOException {
        Set<String> found = new HashSet<>();
        // Up to the high watermark: what is past it is not durable yet, and not this share-partition's
        // (its letters are looked up before it appends any).
        long end = log.highWatermark();
        long stretch = FIRST_STRETCH;
        while (end > log.logStartOffset()) {
            long from = Math.max(log.logStartOffset(), end - stretch);
            List<Set<String>> ours = lettersIn(log, from, end, groupId, source);
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

    /**
     * The share-partition's letters in each batch starting below {@code end} read from {@code from}
     * (the first may start before it), in log order; batches without any are left out.
     */
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
