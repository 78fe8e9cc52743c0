package io.pier.it.share;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Builders for the stock clients the share-group tests drive. */
public final class ShareClients {
    private final String bootstrap;

    public ShareClients(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", bootstrap));
    }

    /**
     * Reads partition 0 of {@code topic} from its start, as raw bytes, until {@code atLeast}
     * records came or {@code max} passed (at most 1,000 polls), then for {@code linger} more: a
     * record that should not be there (a second dead letter) would show up then.
     */
    List<ConsumerRecord<byte[], byte[]>> readFromStart(String topic, int atLeast, Duration max, Duration linger) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + max.toNanos();
            for (int polls = 0; out.size() < atLeast && System.nanoTime() < deadline && polls < 1000; polls++) {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
            }
            if (!linger.isZero()) {
                consumer.poll(linger).forEach(out::add);
            }
        }
        return out;
    }

    public void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    public void setGroupConfig(String group, String key, String value) throws Exception {
        setGroupConfigs(group, key, value);
    }

    /** Sets several group configs at once: key, value, key, value, ... */
    void setGroupConfigs(String group, String... keyValues) throws Exception {
        List<AlterConfigOp> ops = new ArrayList<>();
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            ops.add(new AlterConfigOp(new ConfigEntry(keyValues[i], keyValues[i + 1]), AlterConfigOp.OpType.SET));
        }
        try (Admin admin = admin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
        }
    }

    /**
     * Creates a topic and has {@code group} read it from the earliest offset, with any further
     * group configs (key, value, ...) set in the same request.
     */
    void createTopicReadFromEarliest(String topic, int partitions, String group, String... extraGroupConfigs)
            throws Exception {
        createTopic(topic, partitions);
        String[] configs = new String[extraGroupConfigs.length + 2];
        configs[0] = "share.auto.offset.reset";
        configs[1] = "earliest";
        System.arraycopy(extraGroupConfigs, 0, configs, 2, extraGroupConfigs.length);
        setGroupConfigs(group, configs);
    }

    KafkaProducer<String, String> producer() {
        return producer(new String[0]);
    }

    /** A producer with extra settings (key, value pairs) on top of the defaults. */
    KafkaProducer<String, String> producer(String... extra) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "1");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        for (int i = 0; i + 1 < extra.length; i += 2) {
            p.put(extra[i], extra[i + 1]);
        }
        return new KafkaProducer<>(p);
    }

    /** Produces "prefix-i" values to one partition and waits for every acknowledgement. */
    public void produce(String topic, int partition, String prefix, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer()) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                acks.add(producer.send(new ProducerRecord<>(topic, partition, null, prefix + "-" + i)));
            }
            producer.flush();
            for (Future<RecordMetadata> ack : acks) {
                ack.get();
            }
        }
    }

    /**
     * Produces "prefix-i" values to one partition, waiting for each send before the next, so every
     * record is its own log batch (acquisition then cuts at record granularity).
     */
    void produceEach(String topic, int partition, String prefix, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer()) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, partition, null, prefix + "-" + i)).get();
            }
        }
    }

    /**
     * Produces "prefix-i" values to one partition in as few log batches as possible: the producer
     * lingers and is flushed once at the end.
     */
    void produceBatched(String topic, int partition, String prefix, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer("linger.ms", "10000", "batch.size", "1000000")) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, partition, null, prefix + "-" + i)));
            }
            producer.flush();
            for (var f : sent) {
                f.get();
            }
        }
    }

    /**
     * Polls until {@code done} holds or the deadline passes, handing each record to {@code onRecord}
     * and committing after every poll that returned records. Bounded in time and in poll count.
     */
    static void pollUntil(KafkaShareConsumer<String, String> consumer, Duration max,
            BooleanSupplier done, Consumer<ConsumerRecord<String, String>> onRecord) {
        long deadline = System.nanoTime() + max.toNanos();
        for (int polls = 0; polls < 10_000 && !done.getAsBoolean() && System.nanoTime() < deadline; polls++) {
            var records = consumer.poll(Duration.ofMillis(200));
            for (var r : records) {
                onRecord.accept(r);
            }
            if (!records.isEmpty()) {
                consumer.commitSync();
            }
        }
    }

    /**
     * Produces "prefix-i" values for i in [from, from + count), record i going to partition
     * i % partitions, each record in a log batch of its own (batch.size=0), so a share group can
     * hand out the records one by one; waits for every acknowledgement.
     */
    void produceSpread(KafkaProducer<String, String> singleRecordBatchProducer, String topic, int partitions,
            String prefix, int from, int count) throws Exception {
        List<Future<?>> sent = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            sent.add(singleRecordBatchProducer.send(new ProducerRecord<>(topic, i % partitions, null, prefix + "-" + i)));
        }
        singleRecordBatchProducer.flush();
        for (Future<?> f : sent) {
            f.get();
        }
    }

    /** A producer that puts each record in a batch of its own. */
    KafkaProducer<String, String> singleRecordBatchProducer() {
        return producer("batch.size", "0", "linger.ms", "0");
    }

    public KafkaShareConsumer<String, String> consumer(String group, String ackMode, String... extra) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", ackMode);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        for (int i = 0; i + 1 < extra.length; i += 2) {
            p.put(extra[i], extra[i + 1]);
        }
        return new KafkaShareConsumer<>(p);
    }

    /**
     * Polls until at least {@code count} records arrived or {@code timeout} passed, acknowledging
     * each with {@code type} and committing after every poll (explicit-mode consumer).
     */
    public static List<ConsumerRecord<String, String>> pollAndAck(KafkaShareConsumer<String, String> consumer, int count,
            Duration timeout, AcknowledgeType type) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int polls = 0; got.size() < count && System.nanoTime() < deadline && polls < 10_000; polls++) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                got.add(r);
                consumer.acknowledge(r, type);
            }
            consumer.commitSync();
        }
        return got;
    }

    static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).toList();
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
