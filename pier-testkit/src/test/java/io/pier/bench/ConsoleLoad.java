package io.pier.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The set-up of {@code bench/console.sh}: GROUPS share groups, each reading a topic of its own with
 * PARTITIONS partitions holding RECORDS records each, so the broker holds GROUPS x PARTITIONS
 * share-partitions with state; one share consumer per group reads every record once, accepting
 * most, releasing every 10th (delivered again, then accepted) and rejecting every 50th; and one
 * classic consumer group commits offsets halfway on each topic. Then every client closes, and
 * the file READY is written: the broker is left idle, its share-partitions loaded, for the
 * console's measurement (never asserted; the figures are in docs/benchmarks.md).
 *
 * <pre>bench/testkit-main.sh io.pier.bench.ConsoleLoad BOOTSTRAP GROUPS PARTITIONS RECORDS READY</pre>
 */
public final class ConsoleLoad {
    static {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }

    private static final Duration READ_TIMEOUT = Duration.ofMinutes(5);

    private ConsoleLoad() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            throw new IllegalArgumentException("usage: BOOTSTRAP GROUPS PARTITIONS RECORDS READY");
        }
        String bootstrap = args[0];
        int groups = Integer.parseInt(args[1]);
        int partitions = Integer.parseInt(args[2]);
        int records = Integer.parseInt(args[3]);
        Path ready = Path.of(args[4]);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                topics.add(new NewTopic(topic(g), partitions, (short) 1));
            }
            admin.createTopics(topics).all().get(2, TimeUnit.MINUTES);
            for (int g = 0; g < groups; g++) {
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group(g)),
                        List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                                AlterConfigOp.OpType.SET)))).all().get(1, TimeUnit.MINUTES);
            }
        }
        produce(bootstrap, groups, partitions, records);
        for (int g = 0; g < groups; g++) {
            long read = readOnce(bootstrap, g, partitions * records);
            System.out.printf("share group %s: %d records settled on %d share-partitions%n", group(g), read,
                    partitions);
        }
        commitHalfway(bootstrap, groups, partitions, records);
        Files.writeString(ready, "ready\n");
    }

    static String topic(int g) {
        return "console-bench-" + g;
    }

    static String group(int g) {
        return "console-bench-group-" + g;
    }

    private static void produce(String bootstrap, int groups, int partitions, int records) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("linger.ms", "20");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            for (int g = 0; g < groups; g++) {
                for (int part = 0; part < partitions; part++) {
                    for (int i = 0; i < records; i++) {
                        // A failed send is printed by its callback; flush() waits for them all.
                        Future<RecordMetadata> unused = producer.send(
                                new ProducerRecord<>(topic(g), part, "k" + i, "v" + i), (m, e) -> {
                                    if (e != null) {
                                        System.err.println("send failed: " + e);
                                    }
                                });
                    }
                }
            }
            producer.flush();
        }
    }

    /** Reads every record of group {@code g}'s topic until each is settled: accepted or rejected. */
    private static long readOnce(String bootstrap, int g, long total) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group(g));
        p.put("share.acknowledgement.mode", "explicit");
        long settled = 0;
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(Set.of(topic(g)));
            while (settled < total && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (r.offset() % 50 == 7) {
                        type = AcknowledgeType.REJECT;
                    } else if (r.offset() % 10 == 3 && r.deliveryCount().orElse((short) 1) == 1) {
                        type = AcknowledgeType.RELEASE;
                    }
                    consumer.acknowledge(r, type);
                    if (type != AcknowledgeType.RELEASE) {
                        settled++;
                    }
                }
                consumer.commitSync();
            }
        }
        return settled;
    }

    private static void commitHalfway(String bootstrap, int groups, int partitions, int records) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", "console-bench-readers");
        p.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            java.util.Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
            for (int g = 0; g < groups; g++) {
                for (int part = 0; part < partitions; part++) {
                    offsets.put(new TopicPartition(topic(g), part), new OffsetAndMetadata(records / 2));
                }
            }
            consumer.commitSync(offsets);
        }
    }
}
