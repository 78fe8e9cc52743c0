package io.pier.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The load of {@code bench/bounded-resources.sh} while it measures the broker's memory (never
 * asserted; the figures are in docs/reliability.md, "Bounded resources"). Real clients on a broker
 * started elsewhere:
 * <ul>
 *   <li>{@code produce CLIENTS SECONDS READY}: CLIENTS producers, each on its own connection, each
 *       pipelining up to 64 produce requests of about 1 MiB (one 1 MiB batch of 16 KiB records,
 *       acks=all, idempotence off so the client allows more than 5 in flight): the broker's own
 *       bound of 32 requests in flight per connection is what holds them;</li>
 *   <li>{@code share CLIENTS SECONDS READY}: a backlog of 256 MiB of 16 KiB records on 4
 *       partitions, then CLIENTS share consumers of one group asking for 1 GiB per fetch
 *       ({@code fetch.max.bytes}, {@code max.partition.fetch.bytes}) and 2,000 records per poll,
 *       while one producer with the client's defaults keeps the topic fed.</li>
 * </ul>
 * The file READY is written once the load runs at full rate (after a 5 s warm-up); the load goes
 * on until SECONDS have passed, then the rate is printed.
 *
 * <pre>bench/testkit-main.sh io.pier.bench.BoundedLoad BOOTSTRAP produce|share CLIENTS SECONDS READY</pre>
 */
public final class BoundedLoad {
    static {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }

    private static final int RECORD_BYTES = 16 * 1024;
    private static final int BATCH_BYTES = 1 << 20;
    private static final long SHARE_BACKLOG_BYTES = 256L << 20;
    private static final int SHARE_PARTITIONS = 4;
    private static final Duration WARM_UP = Duration.ofSeconds(5);

    private BoundedLoad() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String mode = args[1];
        int clients = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]);
        Path ready = Path.of(args[4]);
        switch (mode) {
            case "produce" -> produce(bootstrap, clients, seconds, ready);
            case "share" -> share(bootstrap, clients, seconds, ready);
            default -> throw new IllegalArgumentException("mode " + mode + ": produce or share");
        }
    }

    private static void produce(String bootstrap, int clients, long seconds, Path ready) throws Exception {
        createTopic(bootstrap, "bounded-produce", clients);
        byte[] value = new byte[RECORD_BYTES];
        new Random(1).nextBytes(value);
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long endNanos = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int partition = c;
            Thread t = new Thread(() -> {
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap),
                        new ByteArraySerializer(), new ByteArraySerializer())) {
                    while (System.nanoTime() < endNanos) {
                        // send() blocks once buffer.memory is full: the client keeps the pipe full.
                        // Outcomes are counted by the callback.
                        var unused = producer.send(new ProducerRecord<>("bounded-produce", partition, null, value),
                                (md, e) -> (e == null ? acked : failed).incrementAndGet());
                    }
                    producer.flush();
                }
            }, "producer-" + c);
            t.start();
            threads.add(t);
        }
        markReadyAfterWarmUp(ready, acked);
        long ackedAtReady = acked.get();
        long readyNanos = System.nanoTime();
        for (Thread t : threads) {
            t.join();
        }
        double secs = (System.nanoTime() - readyNanos) / 1e9;
        System.out.printf(Locale.ROOT, "produce: %d producers, %d records acknowledged (%.0f MiB/s after the"
                + " warm-up), %d failed%n", clients, acked.get(),
                (acked.get() - ackedAtReady) * (double) RECORD_BYTES / (1 << 20) / secs, failed.get());
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "false");
        p.put("max.in.flight.requests.per.connection", "64");
        p.put("batch.size", String.valueOf(BATCH_BYTES));
        p.put("max.request.size", String.valueOf(2 * BATCH_BYTES));
        p.put("linger.ms", "5");
        p.put("buffer.memory", String.valueOf(96L << 20));
        p.put("compression.type", "none");
        p.put("request.timeout.ms", "60000");
        p.put("delivery.timeout.ms", "120000");
        return p;
    }

    private static void share(String bootstrap, int clients, long seconds, Path ready) throws Exception {
        String topic = "bounded-share";
        String group = "bounded-share-group";
        createTopic(bootstrap, topic, SHARE_PARTITIONS);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        byte[] value = new byte[RECORD_BYTES];
        new Random(2).nextBytes(value);
        long records = SHARE_BACKLOG_BYTES / RECORD_BYTES;
        AtomicLong refused = new AtomicLong();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(bootstrap),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < records; i++) {
                var unused = producer.send(new ProducerRecord<>(topic, (int) (i % SHARE_PARTITIONS), null, value),
                        (md, e) -> {
                            if (e != null) {
                                refused.incrementAndGet();
                            }
                        });
            }
            producer.flush();
        }
        if (refused.get() > 0) {
            throw new IllegalStateException(refused.get() + " backlog records were not acknowledged");
        }
        System.out.printf(Locale.ROOT, "share: backlog of %d records (%d MiB) on %d partitions%n", records,
                SHARE_BACKLOG_BYTES >> 20, SHARE_PARTITIONS);
        AtomicLong consumed = new AtomicLong();
        long endNanos = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        List<Thread> threads = new ArrayList<>();
        // The consumers drain the backlog in seconds: one producer (the client's defaults, at most
        // 5 requests in flight) keeps the topic fed for the whole run.
        Thread feeder = new Thread(() -> {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("batch.size", String.valueOf(BATCH_BYTES));
            p.put("max.request.size", String.valueOf(2 * BATCH_BYTES));
            p.put("linger.ms", "5");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                for (long i = 0; System.nanoTime() < endNanos; i++) {
                    var unused = producer.send(new ProducerRecord<>(topic, (int) (i % SHARE_PARTITIONS), null, value),
                            (md, e) -> {
                                if (e != null) {
                                    refused.incrementAndGet();
                                }
                            });
                }
            }
        }, "share-feeder");
        feeder.start();
        threads.add(feeder);
        for (int c = 0; c < clients; c++) {
            Thread t = new Thread(() -> {
                Properties p = new Properties();
                p.put("bootstrap.servers", bootstrap);
                p.put("group.id", group);
                p.put("fetch.max.bytes", String.valueOf(1 << 30));
                p.put("max.partition.fetch.bytes", String.valueOf(1 << 30));
                p.put("max.poll.records", "2000");
                try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p,
                        new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(Set.of(topic));
                    while (System.nanoTime() < endNanos) {
                        consumed.addAndGet(consumer.poll(Duration.ofMillis(200)).count());
                    }
                }
            }, "share-consumer-" + c);
            t.start();
            threads.add(t);
        }
        markReadyAfterWarmUp(ready, consumed);
        long consumedAtReady = consumed.get();
        long readyNanos = System.nanoTime();
        for (Thread t : threads) {
            t.join();
        }
        double secs = (System.nanoTime() - readyNanos) / 1e9;
        System.out.printf(Locale.ROOT, "share: %d consumers, %d records delivered (%.0f MiB/s after the warm-up),"
                + " %d not acknowledged to the feeder%n", clients, consumed.get(),
                (consumed.get() - consumedAtReady) * (double) RECORD_BYTES / (1 << 20) / secs, refused.get());
    }

    /** Writes {@code ready} once the warm-up is over and {@code progress} has moved since it began. */
    private static void markReadyAfterWarmUp(Path ready, AtomicLong progress) throws InterruptedException, IOException {
        long start = progress.get();
        Thread.sleep(WARM_UP.toMillis());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (progress.get() == start && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        Files.writeString(ready, progress.get() + "\n");
    }

    private static void createTopic(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }
}
