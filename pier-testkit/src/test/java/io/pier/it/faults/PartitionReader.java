package io.pier.it.faults;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads what a fault left in a partition, with a plain assigned consumer. */
final class PartitionReader {
    private PartitionReader() {}

    /** Partition 0 of {@code topic} from its start to its end offset: offset to value, in order. */
    static TreeMap<Long, String> readAll(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        TreeMap<Long, String> values = new TreeMap<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (c.position(tp) < end && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> values.put(r.offset(), r.value()));
            }
        }
        return values;
    }
}
