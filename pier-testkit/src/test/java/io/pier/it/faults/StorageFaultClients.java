package io.pier.it.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The clients of the storage-fault tests, with timeouts short enough that a broker going down
 * fails a call within seconds rather than a client's default minute.
 */
final class StorageFaultClients {
    private StorageFaultClients() {}

    static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "0");
        p.put("request.timeout.ms", "3000");
        p.put("delivery.timeout.ms", "6000");
        p.put("max.block.ms", "6000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Writes {@code prefix0 ... prefix<count-1>} to partition 0, one acknowledged send at a time. */
    static void produce(String bootstrap, String topic, String prefix, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer(bootstrap)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, prefix + i)).get();
            }
        }
    }

    static void createTopic(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
    }

    /** A share group that starts from the log start, so records written before it joined are delivered. */
    static void setEarliest(String bootstrap, String group) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get();
        }
    }

    /** An explicit-mode share consumer of {@code group}, five records a poll, subscribed to {@code topic}. */
    static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("max.poll.records", "5");
        p.put("request.timeout.ms", "3000");
        KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(Set.of(topic));
        return consumer;
    }

    /** Polls once, ACCEPTs what came, commits; the offsets whose ACCEPT was confirmed. */
    static List<Long> pollAcceptAndCommit(KafkaShareConsumer<String, String> consumer) {
        List<Long> offsets = new ArrayList<>();
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
            consumer.acknowledge(r);
            offsets.add(r.offset());
        }
        if (offsets.isEmpty()) {
            return offsets;
        }
        boolean ok = consumer.commitSync(Duration.ofSeconds(5)).values().stream().allMatch(e -> e.isEmpty());
        return ok ? offsets : List.of();
    }

    static List<String> values(String prefix, int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }
}
