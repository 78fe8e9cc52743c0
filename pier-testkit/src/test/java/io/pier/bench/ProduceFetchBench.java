package io.pier.bench;

import io.pier.server.Pier;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Throughput of one producer and then one consumer against an in-process Pier, once per
 * durability mode. A measurement to read, never asserted; run it with {@code bench/produce-fetch.sh}.
 *
 * <pre>
 * usage: ProduceFetchBench [records (2000000)] [record bytes (100)] [modes (durable,none)]
 * </pre>
 *
 * <p>One partition; producer acks=all, idempotent, linger.ms=5, batch.size=65536; the consumer
 * uses assign/seek from offset 0 and reads until it has every record.
 */
public final class ProduceFetchBench {
    private static final Duration PHASE_TIMEOUT = Duration.ofMinutes(10);

    static {
        // Keep the clients' and broker's INFO lines out of the figures unless asked for.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }

    private ProduceFetchBench() {}

    public static void main(String[] args) throws Exception {
        long records = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000L;
        int recordBytes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        String[] modes = (args.length > 2 ? args[2] : "durable,none").split(",");
        System.out.printf(Locale.ROOT, "ProduceFetchBench: %d records of %d bytes, one partition, JVM %s, %d CPUs%n",
                records, recordBytes, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
        for (String mode : modes) {
            run(mode, records, recordBytes);
        }
    }

    private static void run(String mode, long records, int recordBytes) throws Exception {
        try (Pier pier = Pier.builder().config("pier.log.durability", mode).start()) {
            String topic = "bench";
            try (Admin admin = Admin.create(props(pier))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            }
            long produceNanos = produce(pier, topic, records, recordBytes);
            report(mode, "produce", records, recordBytes, produceNanos);
            long fetchNanos = fetch(pier, topic, records);
            report(mode, "fetch", records, recordBytes, fetchNanos);
        }
    }

    private static long produce(Pier pier, String topic, long records, int recordBytes) throws Exception {
        Properties p = props(pier);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        p.put("batch.size", "65536");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        byte[] value = new byte[recordBytes];
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        long start = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long i = 0; i < records && failure.get() == null; i++) {
                var unused = producer.send(new ProducerRecord<>(topic, 0, null, value), (md, e) -> { // the callback sees failures
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else {
                        acked.incrementAndGet();
                    }
                });
            }
            producer.flush();
        }
        long nanos = System.nanoTime() - start;
        if (failure.get() != null || acked.get() != records) {
            throw new IllegalStateException("produce acknowledged " + acked.get() + " of " + records, failure.get());
        }
        return nanos;
    }

    private static long fetch(Pier pier, String topic, long records) {
        Properties c = props(pier);
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        c.put("enable.auto.commit", "false");
        TopicPartition tp = new TopicPartition(topic, 0);
        long start = System.nanoTime();
        long deadline = start + PHASE_TIMEOUT.toNanos();
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            while (read < records && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                read += batch.count();
            }
        }
        long nanos = System.nanoTime() - start;
        if (read != records) {
            throw new IllegalStateException("fetched " + read + " of " + records + " within " + PHASE_TIMEOUT);
        }
        return nanos;
    }

    private static void report(String mode, String phase, long records, int recordBytes, long nanos) {
        double seconds = nanos / 1e9;
        System.out.printf(Locale.ROOT, "%-8s %-8s %,12d records in %7.2f s  %,12.0f records/s  %8.1f MB/s%n", mode,
                phase, records, seconds, records / seconds, records * (double) recordBytes / seconds / 1e6);
    }

    private static Properties props(Pier pier) {
        Properties p = new Properties();
        p.put("bootstrap.servers", pier.bootstrapServers());
        return p;
    }
}
