package io.pier.it.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The clients of the storage-fault tests, with timeouts short enough that a broker going down
 * fails a call within seconds rather than a client's default minute.
 */
final class StorageFaultClients {
    private StorageFaultClients() {}

    static KafkaProducer<String, String> producer(String bootstrap) {
        return producer(bootstrap, Map.of());
    }

    /** {@link #producer(String)} with {@code extra} settings on top, e.g. a {@code transactional.id}. */
    static KafkaProducer<String, String> producer(String bootstrap, Map<String, String> extra) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "0");
        p.put("request.timeout.ms", "3000");
        p.put("delivery.timeout.ms", "6000");
        p.put("max.block.ms", "6000");
        p.putAll(extra);
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

    /**
     * ACCEPTs until 10 are confirmed, injects {@code fault}, then goes on accepting until the broker
     * has stopped ({@code stopped} counted down) or {@code stopTimeout} passed: the next state write
     * fails and takes the broker down. The offsets whose ACCEPT was confirmed, before or after the fault.
     */
    static Set<Long> acceptAcrossAFault(KafkaShareConsumer<String, String> consumer, Runnable fault,
            CountDownLatch stopped, Duration stopTimeout) {
        Set<Long> accepted = new HashSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (accepted.size() < 10 && System.nanoTime() < deadline) {
            accepted.addAll(pollAcceptAndCommit(consumer));
        }
        assertThat(accepted).as("ACCEPTs confirmed before the fault").isNotEmpty();
        fault.run();
        deadline = System.nanoTime() + stopTimeout.toNanos();
        while (stopped.getCount() > 0 && System.nanoTime() < deadline) {
            try {
                accepted.addAll(pollAcceptAndCommit(consumer));
            } catch (KafkaException e) {
                // the broker is going away
            }
        }
        return accepted;
    }

    /**
     * After a restart: of the {@code total} records of {@code topic}, every one not in
     * {@code accepted} is delivered to {@code group} again, and none of {@code accepted} is.
     */
    static void assertOnlyTheUnconfirmedComeBack(String bootstrap, String group, String topic, Set<Long> accepted,
            int total) {
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(bootstrap, group, topic)) {
            Set<Long> redelivered = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (accepted.size() + redelivered.size() < total && System.nanoTime() < deadline) {
                List<Long> got = pollAcceptAndCommit(consumer);
                assertThat(got).as("records whose ACCEPT was confirmed").doesNotContainAnyElementsOf(accepted);
                redelivered.addAll(got);
            }
            assertThat(redelivered).as("every record not confirmed comes back").hasSize(total - accepted.size());
        }
    }

    static List<String> values(String prefix, int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }
}
