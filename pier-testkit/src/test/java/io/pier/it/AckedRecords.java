package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Client settings and the read-back checker shared by the durability tests: what a producer was
 * told (value, partition, offset) is compared with what a consumer finds in the log.
 */
final class AckedRecords {
    /** One acknowledged produce: the broker said {@code value} is at {@code offset} of {@code partition}. */
    record Ack(String value, int partition, long offset) {}

    private final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();

    void add(String value, RecordMetadata md) {
        acks.add(new Ack(value, md.partition(), md.offset()));
    }

    List<Ack> all() {
        return new ArrayList<>(acks);
    }

    int size() {
        return acks.size();
    }

    static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }

    static KafkaConsumer<String, String> consumer(String bootstrap) {
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        c.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(c);
    }

    /**
     * Reads every partition of {@code topic} from its beginning up to the end offset the broker
     * reports, with assign/seek. Gives up after {@code timeout}; the caller's assertions then show
     * what is missing.
     */
    static Map<Integer, List<ConsumerRecord<String, String>>> readAll(String bootstrap, String topic,
            int partitionCount, Duration timeout) {
        Map<Integer, List<ConsumerRecord<String, String>>> out = new HashMap<>();
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitionCount; p++) {
            tps.add(new TopicPartition(topic, p));
            out.put(p, new ArrayList<>());
        }
        try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, timeout);
            long deadline = System.nanoTime() + timeout.toNanos();
            int polls = 0;
            while (!reached(consumer, end) && System.nanoTime() < deadline && polls++ < 100_000) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    out.get(r.partition()).add(r);
                }
            }
        }
        return out;
    }

    private static boolean reached(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The durability invariants: every acknowledged value is at exactly its acknowledged offset,
     * no two acknowledgements name one offset, and each partition's offsets are dense from 0 (these
     * tests delete nothing) with no value stored twice.
     */
    static void assertLogMatches(Collection<Ack> acks, Map<Integer, List<ConsumerRecord<String, String>>> log) {
        Map<String, Ack> offsetOwner = new HashMap<>();
        for (Ack a : acks) {
            Ack other = offsetOwner.put(a.partition() + "@" + a.offset(), a);
            assertThat(other).as("two acknowledgements for partition %d offset %d", a.partition(), a.offset())
                    .isNull();
        }
        Map<Integer, Map<Long, String>> byOffset = new HashMap<>();
        Map<String, Long> seenValues = new HashMap<>();
        for (Map.Entry<Integer, List<ConsumerRecord<String, String>>> e : log.entrySet()) {
            Map<Long, String> values = new HashMap<>();
            List<ConsumerRecord<String, String>> records = e.getValue();
            for (int i = 0; i < records.size(); i++) {
                ConsumerRecord<String, String> r = records.get(i);
                long expected = i == 0 ? 0 : records.get(i - 1).offset() + 1;
                assertThat(r.offset()).as("offsets of partition %d are dense from 0", e.getKey()).isEqualTo(expected);
                Long earlier = seenValues.put(r.value(), r.offset());
                assertThat(earlier).as("value %s stored twice (partition %d offsets %s and %d)", r.value(),
                        e.getKey(), earlier, r.offset()).isNull();
                values.put(r.offset(), r.value());
            }
            byOffset.put(e.getKey(), values);
        }
        for (Ack a : acks) {
            assertThat(byOffset.get(a.partition()).get(a.offset()))
                    .as("acknowledged value at partition %d offset %d", a.partition(), a.offset())
                    .isEqualTo(a.value());
        }
    }
}
