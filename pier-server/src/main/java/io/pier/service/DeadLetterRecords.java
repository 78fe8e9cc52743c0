package io.pier.service;

import io.pier.log.PartitionLog;
import io.pier.share.DeadLetterBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Utils;

/**
 * The dead letters of share groups (KIP-1191), as Kafka 4.4 writes them: one record per dead
 * record, stamped with the time of writing, its headers (in Kafka's order) naming where it came
 * from and why it died, every value a UTF-8 string; with {@code
 * errors.deadletterqueue.copy.record.enable} also the original key and value, and (beyond Kafka,
 * which drops them, so that a redrive can restore the record whole) the original headers first.
 */
public final class DeadLetterRecords {
    static final String GROUP = "__dlq.errors.group";
    static final String TOPIC = "__dlq.errors.topic";
    static final String PARTITION = "__dlq.errors.partition";
    static final String OFFSET = "__dlq.errors.offset";
    static final String DELIVERY_COUNT = "__dlq.errors.delivery.count";
    static final String MESSAGE = "__dlq.errors.message";

    /** How much of a source log one read brings in while collecting originals. */
    private static final int READ_BYTES = 1 << 20;

    private DeadLetterRecords() {}

    /**
     * The dead letter of one record.
     *
     * @param original the record as the log holds it, or null when it is not copied or no longer there
     */
    static SimpleRecord letter(String groupId, TopicPartition source, DeadLetterBatch.Letter letter, Record original,
            long nowMs) {
        List<Header> headers = new ArrayList<>();
        if (original != null) {
            for (Header h : original.headers()) {
                if (!h.key().startsWith("__dlq.errors.")) {
                    headers.add(h);
                }
            }
        }
        headers.add(header(TOPIC, source.topic()));
        headers.add(header(PARTITION, Integer.toString(source.partition())));
        headers.add(header(OFFSET, Long.toString(letter.offset())));
        headers.add(header(GROUP, groupId));
        headers.add(header(DELIVERY_COUNT, Integer.toString(letter.deliveryCount())));
        headers.add(header(MESSAGE, letter.reason().message));
        Header[] all = headers.toArray(Header[]::new);
        if (original == null) {
            return new SimpleRecord(nowMs, (byte[]) null, null, all);
        }
        return new SimpleRecord(nowMs, Utils.toNullableArray(original.key()), Utils.toNullableArray(original.value()), all);
    }

    /** One letter per record of the batch, with the originals read from the source log when copied. */
    static List<SimpleRecord> letters(PartitionLog log, String groupId, TopicPartition source,
            DeadLetterBatch batch, boolean copy, long nowMs) throws IOException {
        List<SimpleRecord> out = new ArrayList<>(batch.letters().size());
        MemoryRecords read = MemoryRecords.EMPTY;
        for (DeadLetterBatch.Letter letter : batch.letters()) {
            Record original = null;
            if (copy && letter.offset() >= log.logStartOffset()) {
                original = find(read, letter.offset());
                if (original == null) {
                    read = log.read(letter.offset(), READ_BYTES, true).records();
                    original = find(read, letter.offset());
                }
            }
            out.add(letter(groupId, source, letter, original, nowMs));
        }
        return out;
    }

    private static Record find(MemoryRecords records, long offset) {
        for (RecordBatch b : records.batches()) {
            if (b.lastOffset() < offset) {
                continue;
            }
            if (b.baseOffset() > offset) {
                return null;
            }
            for (Record r : b) {
                if (r.offset() == offset) {
                    return r;
                }
            }
            return null;
        }
        return null;
    }

    /** The letters as one batch of records, so that they are appended (and found again) together. */
    static MemoryRecords batch(List<SimpleRecord> letters) {
        return MemoryRecords.withRecords(Compression.NONE, letters.toArray(SimpleRecord[]::new));
    }

    /**
     * The source offsets of the dead letters of one share-partition that {@code batch} holds, each
     * as {@code offset:deliveryCount}; empty when it holds none of them.
     */
    static Set<String> lettersOf(RecordBatch batch, String groupId, TopicPartition source) {
        Set<String> found = new HashSet<>();
        for (Record r : batch) {
            String id = letterId(java.util.Arrays.asList(r.headers()), groupId, source);
            if (id != null) {
                found.add(id);
            }
        }
        return found;
    }

    /**
     * The id ({@code offset:deliveryCount}, {@link #idOf}) of the dead letter with these headers
     * if it is one of {@code source}'s share-partition of {@code groupId}, else null.
     */
    public static String letterId(Iterable<Header> headers, String groupId, TopicPartition source) {
        String group = null;
        String topic = null;
        String part = null;
        String offset = null;
        String count = null;
        for (Header h : headers) {
            switch (h.key()) {
                case GROUP -> group = text(h);
                case TOPIC -> topic = text(h);
                case PARTITION -> part = text(h);
                case OFFSET -> offset = text(h);
                case DELIVERY_COUNT -> count = text(h);
                default -> {
                    // not one of the dead letter's own headers
                }
            }
        }
        boolean ours = groupId.equals(group) && source.topic().equals(topic)
                && Integer.toString(source.partition()).equals(part) && offset != null;
        return ours ? offset + ":" + count : null;
    }

    /** The key {@link #lettersOf} gives a letter. */
    static String idOf(DeadLetterBatch.Letter letter) {
        return letter.offset() + ":" + letter.deliveryCount();
    }

    private static Header header(String key, String value) {
        return new RecordHeader(key, value.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(Header h) {
        return h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

}
