package io.pier.it.soak;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Dead letters through the soak (KIP-1191; issue 39's crash soak "through the whole broker"): the
 * share group writes a letter for each record that dies, and every kill, power loss or other fault
 * must leave exactly one per dead record. What the load was told is noted here; {@link #check}
 * reads the whole queue at the end:
 * <ul>
 *   <li>no record has two letters;
 *   <li>every confirmed REJECT, and every confirmed RELEASE of a last delivery, has its letter
 *       (waited for: letters are written after the record's death is durable);
 *   <li>no record whose ACCEPT was confirmed has a letter;
 *   <li>each letter names a partition and offset of the source topic.
 * </ul>
 * A record may die without the load hearing of it (an unconfirmed REJECT that the broker applied,
 * a lock that expired on its last delivery): its one letter is allowed, never required.
 */
final class DeadLetterOracle {
    private static final String OFFSET = "__dlq.errors.offset";
    private static final String PARTITION = "__dlq.errors.partition";
    private static final String TOPIC = "__dlq.errors.topic";

    private final String sourceTopic;
    private final String queue;
    private final int deliveryLimit;
    private final Set<String> accepted = ConcurrentHashMap.newKeySet();
    private final Set<String> dead = ConcurrentHashMap.newKeySet();

    DeadLetterOracle(String sourceTopic, String queue, int deliveryLimit) {
        this.sourceTopic = sourceTopic;
        this.queue = queue;
        this.deliveryLimit = deliveryLimit;
    }

    /** A confirmed ACCEPT. */
    void accepted(TopicPartition tp, long offset) {
        accepted.add(place(tp.partition(), offset));
    }

    /** A confirmed REJECT, or RELEASE of delivery {@code count}: the record died if that was the last. */
    void died(TopicPartition tp, long offset, boolean rejected, short count) {
        if (rejected || count >= deliveryLimit) {
            dead.add(place(tp.partition(), offset));
        }
    }

    /**
     * Reads the queue until every letter the load expects is there or {@code wait} has passed,
     * then adds what breaks the rules above to {@code violations}; returns a summary line.
     */
    String check(String bootstrap, Duration wait, Violations violations) {
        Map<String, Integer> letters = new HashMap<>();
        List<String> foreign = new ArrayList<>();
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("max.poll.records", "5000");
        TopicPartition q = new TopicPartition(queue, 0);
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.assign(List.of(q));
            c.seekToBeginning(List.of(q));
            long deadline = System.nanoTime() + wait.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String topic = header(r, TOPIC);
                    String place = header(r, PARTITION) + "@" + header(r, OFFSET);
                    if (!sourceTopic.equals(topic)) {
                        foreign.add(topic + "-" + place);
                    }
                    letters.merge(place, 1, Integer::sum);
                }
                if (letters.keySet().containsAll(dead) && c.position(q) >= c.endOffsets(List.of(q)).get(q)) {
                    break;
                }
                sleep(100);
            }
        }
        foreign.forEach(f -> violations.add("DLQ", "a letter names " + f + ", not a record of " + sourceTopic));
        letters.forEach((place, n) -> {
            if (n > 1) {
                violations.add("DLQ", sourceTopic + "-" + place + " has " + n + " dead letters");
            }
            if (accepted.contains(place)) {
                violations.add("DLQ", sourceTopic + "-" + place + " has a dead letter after a confirmed ACCEPT");
            }
        });
        long missing = 0;
        for (String place : dead) {
            if (!letters.containsKey(place)) {
                missing++;
                violations.add("DLQ", sourceTopic + "-" + place + " died (confirmed) without a dead letter");
            }
        }
        long unconfirmed = letters.keySet().stream().filter(k -> !dead.contains(k)).count();
        return String.format("%d dead letters for %d records, %d confirmed dead (%d without a letter), %d dead"
                + " without the load told", letters.values().stream().mapToInt(Integer::intValue).sum(),
                letters.size(), dead.size(), missing, unconfirmed);
    }

    private static String place(int partition, long offset) {
        return partition + "@" + offset;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String key) {
        Header h = r.headers().lastHeader(key);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the dead-letter queue", e);
        }
    }
}
