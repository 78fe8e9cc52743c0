package io.pier.dlq;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * One record of a dead-letter topic, read as KIP-1191 letters are written: UTF-8 string headers
 * {@code __dlq.errors.topic}, {@code .partition}, {@code .offset}, {@code .group}, {@code
 * .delivery.count}, {@code .message}; with {@code errors.deadletterqueue.copy.record.enable} also
 * the original key, value and (Pier) the original headers, which come first.
 */
record DeadLetter(ConsumerRecord<byte[], byte[]> record, String group, TopicPartition source, long sourceOffset,
        List<Header> originalHeaders, String problem) {
    static final String PREFIX = "__dlq.errors.";
    static final String TOPIC = PREFIX + "topic";
    static final String PARTITION = PREFIX + "partition";
    static final String OFFSET = PREFIX + "offset";
    static final String GROUP = PREFIX + "group";

    static DeadLetter of(ConsumerRecord<byte[], byte[]> record) {
        String topic = null;
        String partition = null;
        String offset = null;
        String group = null;
        List<Header> original = new ArrayList<>();
        for (Header h : record.headers()) {
            if (!h.key().startsWith(PREFIX)) {
                original.add(h);
                continue;
            }
            String v = h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
            switch (h.key()) {
                case TOPIC -> topic = v;
                case PARTITION -> partition = v;
                case OFFSET -> offset = v;
                case GROUP -> group = v;
                default -> {
                    // delivery count and message: reported by the broker, not needed to rebuild the record
                }
            }
        }
        if (topic == null || partition == null || offset == null || group == null) {
            return new DeadLetter(record, group, null, -1, original,
                    "not a dead letter: it lacks one of the headers " + TOPIC + ", " + PARTITION + ", " + OFFSET
                            + ", " + GROUP);
        }
        try {
            int p = Integer.parseInt(partition.trim());
            long o = Long.parseLong(offset.trim());
            if (p < 0 || o < 0) {
                throw new NumberFormatException("negative");
            }
            return new DeadLetter(record, group, new TopicPartition(topic, p), o, original, null);
        } catch (NumberFormatException e) {
            return new DeadLetter(record, group, null, -1, original, "not a dead letter: " + PARTITION + "='"
                    + partition + "' or " + OFFSET + "='" + offset + "' is not a number");
        }
    }

    /** Whether the letter carries the record itself (a copy): a key, a value or original headers. */
    boolean hasCopy() {
        return record.key() != null || record.value() != null || !originalHeaders.isEmpty();
    }
}
