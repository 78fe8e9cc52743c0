package io.pier.bench;

import io.pier.common.Clock;
import io.pier.log.FileIO;
import io.pier.runtime.AgentRunner;
import io.pier.server.Pier;
import io.pier.state.DurableSharePersister;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareStateWrite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Cost of durable share state (never asserted; see docs/share-state-format.md for figures):
 * bytes of share-state log per accepted record with in-order acks and with 10% released first,
 * share-consume throughput with {@code pier.share.delivery.count.durable} on and off, and the time
 * to reopen the state of 10,000 share-partitions.
 *
 * <pre>bench/share-state.sh [records (100000)]</pre>
 */
public final class ShareStateBench {
    static {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }

    private ShareStateBench() {}

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        System.out.printf(Locale.ROOT, "ShareStateBench: %d records of 100 bytes, JVM %s, %d CPUs%n", records,
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
        for (boolean durableCounts : new boolean[] {true, false}) {
            for (int releasePercent : new int[] {0, 10}) {
                consume(records, durableCounts, releasePercent);
            }
        }
        restart(10_000);
    }

    private static void consume(int records, boolean durableCounts, int releasePercent) throws Exception {
        Path data = Files.createTempDirectory("pier-share-bench-");
        try (Pier pier = Pier.builder().dataDir(data)
                .config("pier.share.delivery.count.durable", String.valueOf(durableCounts)).start()) {
            Map<String, Object> common = Map.of("bootstrap.servers", pier.bootstrapServers());
            try (Admin admin = Admin.create(common)) {
                admin.createTopics(List.of(new NewTopic("bench", 1, (short) 1))).all().get();
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "bench-group"),
                        List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                                AlterConfigOp.OpType.SET)))).all().get();
            }
            Properties pp = new Properties();
            pp.putAll(common);
            pp.put("acks", "all");
            pp.put("linger.ms", "5");
            pp.put("key.serializer", ByteArraySerializer.class.getName());
            pp.put("value.serializer", ByteArraySerializer.class.getName());
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
                List<Future<RecordMetadata>> acks = new ArrayList<>();
                for (int i = 0; i < records; i++) {
                    acks.add(producer.send(new ProducerRecord<>("bench", 0, null, new byte[100])));
                }
                producer.flush();
                for (Future<RecordMetadata> ack : acks) {
                    ack.get();
                }
            }
            long stateBefore = stateBytes(data);
            Properties cp = new Properties();
            cp.putAll(common);
            cp.put("group.id", "bench-group");
            cp.put("share.acknowledgement.mode", "explicit");
            cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
            cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
            long accepted = 0;
            long deliveries = 0;
            long start = System.nanoTime();
            try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(cp)) {
                consumer.subscribe(Set.of("bench"));
                long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
                while (accepted < records && System.nanoTime() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        deliveries++;
                        boolean release = r.deliveryCount().orElse((short) 1) == 1 && releasePercent > 0
                                && Math.floorMod(r.offset() * 31, 100) < releasePercent;
                        consumer.acknowledge(r, release ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                        accepted += release ? 0 : 1;
                    }
                    consumer.commitSync();
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            long stateBytes = stateBytes(data) - stateBefore;
            System.out.printf(Locale.ROOT, "durableCounts=%-5s released=%2d%%: %d accepted, %d deliveries in %.2f s"
                    + " = %.0f records/s; share-state log %d bytes = %.2f bytes per accepted record%n",
                    durableCounts, releasePercent, accepted, deliveries, secs, accepted / secs, stateBytes,
                    (double) stateBytes / accepted);
        } finally {
            delete(data);
        }
    }

    private static void restart(int partitions) throws Exception {
        Path dir = Files.createTempDirectory("pier-share-restart-");
        try {
            Uuid topic = Uuid.randomUuid();
            try (RunningPersister running = RunningPersister.open(dir)) {
                DurableSharePersister p = running.persister();
                List<CompletableFuture<Void>> pending = new ArrayList<>();
                for (int i = 0; i < partitions; i++) {
                    SharePartitionKey key = new SharePartitionKey("group-" + (i % 100), topic, i);
                    pending.add(p.initialize(key, 0));
                }
                CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get();
                pending.clear();
                // each share-partition: 20 updates with a few state batches, as after some traffic
                for (int round = 0; round < 20; round++) {
                    for (int i = 0; i < partitions; i++) {
                        SharePartitionKey key = new SharePartitionKey("group-" + (i % 100), topic, i);
                        long base = round * 100L;
                        pending.add(p.write(new ShareStateWrite(key, 0, base, List.of(
                                new PersistedBatch(base, base + 49, PersistedBatch.ACKNOWLEDGED, (short) 1),
                                new PersistedBatch(base + 50, base + 59, PersistedBatch.AVAILABLE, (short) 2),
                                new PersistedBatch(base + 60, base + 99, PersistedBatch.AVAILABLE, (short) 1)))));
                    }
                }
                CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get();
            }
            long bytes = stateBytes(dir.getParent().resolve(dir.getFileName()));
            for (int run = 0; run < 3; run++) {
                long t0 = System.nanoTime();
                try (RunningPersister running = RunningPersister.open(dir)) {
                    DurableSharePersister p = running.persister();
                    double ms = (System.nanoTime() - t0) / 1e6;
                    System.out.printf(Locale.ROOT, "restart: %d share-partitions (%d bytes of state log, %d records"
                            + " per key since init) reopened in %.0f ms%n", p.states().size(), bytes, 21, ms);
                }
            }
        } finally {
            delete(dir);
        }
    }

    /** The persister on its own runner thread, as the broker runs it; closing stops both. */
    private record RunningPersister(DurableSharePersister persister, AgentRunner runner) implements AutoCloseable {
        static RunningPersister open(Path dir) throws IOException {
            AgentRunner runner = new AgentRunner(Clock.SYSTEM, (agent, cause) -> { });
            DurableSharePersister p = DurableSharePersister.open(dir, DurableSharePersister.Options.DEFAULTS,
                    Clock.SYSTEM, FileIO.REAL, runner.wakeup(), (what, cause) -> { });
            runner.start(p);
            return new RunningPersister(p, runner);
        }

        @Override
        public void close() {
            runner.close();
        }
    }

    private static long stateBytes(Path data) throws IOException {
        Path dir = Files.isDirectory(data.resolve("share-state")) ? data.resolve("share-state") : data;
        try (Stream<Path> files = Files.list(dir)) {
            long total = 0;
            for (Path f : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                total += Files.size(f);
            }
            return total;
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(f -> f.toFile().delete());
        }
    }
}
