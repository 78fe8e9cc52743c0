package io.pier.it.admin;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Topics, records and share consumers that the admin tests set up through the stock clients. */
final class ShareFixture {
    private final String bootstrap;

    ShareFixture(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", bootstrap));
    }

    void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    void setGroupConfig(String group, String key, String value) throws Exception {
        try (Admin admin = admin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET)))).all().get();
        }
    }

    /** Produces "prefix-i" values to one partition and waits for every acknowledgement. */
    void produce(String topic, int partition, String prefix, int count) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, partition, null, prefix + "-" + i));
            }
            producer.flush();
        }
    }

    KafkaShareConsumer<String, String> consumer(String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    /**
     * Joins {@code group}, accepts the records below {@code acceptBelow} and releases the others
     * until {@code acceptBelow} records are accepted, then leaves. Returns the offsets first
     * delivered, in order.
     */
    List<Long> acceptBelow(String group, String topic, long acceptBelow) {
        List<Long> delivered = new java.util.ArrayList<>();
        long accepted = 0;
        try (KafkaShareConsumer<String, String> consumer = consumer(group)) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.currentTimeMillis() + 30_000;
            while (accepted < acceptBelow && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.deliveryCount().orElse((short) 0) == 1) {
                        delivered.add(r.offset());
                    }
                    boolean accept = r.offset() < acceptBelow;
                    consumer.acknowledge(r, accept ? AcknowledgeType.ACCEPT : AcknowledgeType.RELEASE);
                    accepted += accept ? 1 : 0;
                }
                consumer.commitSync();
            }
        }
        return delivered;
    }
}
