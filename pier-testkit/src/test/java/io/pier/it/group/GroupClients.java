package io.pier.it.group;

import java.util.Properties;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** The consumer-group clients of the group ITs. */
final class GroupClients {
    private GroupClients() {}

    /**
     * A KafkaConsumer of {@code group} speaking {@code protocol} ({@code classic} or {@code consumer}),
     * reading from the earliest offset and committing only when told; {@code instanceId} null for a
     * dynamic member.
     */
    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String protocol,
            String instanceId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (instanceId != null) {
            p.put("group.instance.id", instanceId);
        }
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
