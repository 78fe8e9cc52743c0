package io.pier.it.faults;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads what a fault left in a partition: its records, and a share group's start offset in it. */
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

    /** The share group's start offset on partition 0 of {@code topic}, as Admin lists it (-1: none yet). */
    static long shareStartOffset(String bootstrap, String group, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin
                    .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo o = offsets.get(new TopicPartition(topic, 0));
            return o == null ? -1 : o.startOffset();
        }
    }
}
