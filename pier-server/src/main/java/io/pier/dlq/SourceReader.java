package io.pier.dlq;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads single records back from their source topic-partitions, for letters without a copy. One
 * consumer, assigned to one partition at a time; what a fetch returned is kept, so letters of
 * neighbouring offsets cost one fetch.
 */
final class SourceReader implements AutoCloseable {
    /** Why a record cannot be read back; the redrive reports it and goes on. */
    static final class Missing extends Exception {
        private static final long serialVersionUID = 1L;

        Missing(String message) {
            super(message);
        }
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Topics topics;
    private final Duration timeout;
    private final Map<TopicPartition, Long> logStart = new HashMap<>();
    private TopicPartition cachedPartition;
    private final Map<Long, ConsumerRecord<byte[], byte[]>> cached = new HashMap<>();

    SourceReader(Properties clientProperties, Topics topics, Duration timeout) {
        Properties p = new Properties();
        p.putAll(clientProperties);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"); // what the share group could deliver
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "pier-dlq-redrive-source");
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.topics = topics;
        this.timeout = timeout;
    }

    /** The record at {@code offset} of {@code tp}; {@link Missing} (with why) when the log no longer holds it. */
    ConsumerRecord<byte[], byte[]> read(TopicPartition tp, long offset) throws Missing {
        int partitions = topics.partitions(tp.topic());
        if (partitions < 0) {
            throw new Missing("the source topic " + tp.topic() + " no longer exists and the letter carries no copy");
        }
        if (tp.partition() >= partitions) {
            throw new Missing("the source partition " + tp + " no longer exists (the topic has " + partitions
                    + ") and the letter carries no copy");
        }
        if (tp.equals(cachedPartition) && cached.containsKey(offset)) {
            return cached.get(offset);
        }
        Long start = logStart.get(tp);
        if (start == null || offset < start) {
            start = consumer.beginningOffsets(List.of(tp), timeout).get(tp);
            logStart.put(tp, start);
        }
        if (offset < start) {
            throw new Missing("offset " + offset + " is below the log start offset " + start + " of " + tp
                    + " (deleted or expired) and the letter carries no copy");
        }
        long end = consumer.endOffsets(List.of(tp), timeout).get(tp);
        if (offset >= end) {
            throw new Missing("offset " + offset + " is at or past the log end offset " + end + " of " + tp
                    + " (the topic was recreated?) and the letter carries no copy");
        }
        consumer.assign(List.of(tp));
        consumer.seek(tp, offset);
        cachedPartition = tp;
        cached.clear();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    cached.put(r.offset(), r);
                }
            } catch (OffsetOutOfRangeException e) {
                logStart.remove(tp);
                throw new Missing("offset " + offset + " of " + tp + " was deleted while reading it (below the log"
                        + " start offset now) and the letter carries no copy");
            }
            if (cached.containsKey(offset)) {
                return cached.get(offset);
            }
            if (!cached.isEmpty() || consumer.position(tp, timeout) > offset) {
                throw new Missing("no record at offset " + offset + " of " + tp
                        + " (compacted away, or part of an aborted transaction) and the letter carries no copy");
            }
        }
        throw new RedriveException("could not read offset " + offset + " of " + tp + " within " + timeout.toMillis()
                + " ms");
    }

    @Override
    public void close() {
        consumer.close();
    }
}
