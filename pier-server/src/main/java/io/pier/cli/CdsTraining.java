package io.pier.cli;

import io.pier.server.Pier;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code pier cds-training}: the workload the launcher runs once under
 * {@code -XX:ArchiveClassesAtExit}, so that later starts map the classes a broker needs from a
 * class-data-sharing archive instead of reading, parsing and verifying them from the jars, which is
 * most of a cold start. It starts a broker on a free loopback port with a temporary data directory,
 * and a second JVM ({@code pier cds-training --clients BOOTSTRAP}) sends it what first clients send:
 * ApiVersions, Metadata, CreateTopics, Produce with each codec, Fetch, a share group's fetch and
 * ACCEPT, a metrics scrape. The clients run in their own JVM so that their classes stay out of the
 * broker's archive: the JVM relocates an archive when it maps it, which dirties every page, so each
 * class archived but never used costs resident memory. Nothing here reaches beyond 127.0.0.1.
 */
final class CdsTraining {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long CLIENTS_TIMEOUT_SECONDS = 120;
    private static final String TOPIC = "cds-training";
    private static final int RECORDS = 200;

    private CdsTraining() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        try {
            if (args.length == 3 && args[1].equals("--clients")) {
                driveAsClients(args[2]);
                return 0;
            }
            // The builder's defaults: a temporary data directory removed on close, ephemeral ports.
            try (Pier pier = Pier.builder().start()) {
                runClients(pier.bootstrapServers(), pier.metricsPort());
            }
        } catch (Exception e) {
            err.println("pier: class-data training run failed: " + e);
            return 1;
        }
        out.println("pier: class-data training run done");
        return 0;
    }

    /** Runs the client half in a child JVM of the same binary and class path, and waits for it. */
    private static void runClients(String bootstrap, int metricsPort) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process clients = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", Main.class.getName(), "cds-training", "--clients",
                bootstrap + (metricsPort > 0 ? "," + metricsPort : "")).inheritIO().start();
        if (!clients.waitFor(CLIENTS_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            clients.destroyForcibly();
            throw new IOException("the client half did not finish in " + CLIENTS_TIMEOUT_SECONDS + " s");
        }
        if (clients.exitValue() != 0) {
            throw new IOException("the client half exited with " + clients.exitValue());
        }
    }

    /** {@code target}: the bootstrap address, then a comma and the metrics port if metrics are on. */
    private static void driveAsClients(String target) throws Exception {
        int comma = target.indexOf(',');
        String bootstrap = comma < 0 ? target : target.substring(0, comma);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, TOPIC), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get();
            admin.describeCluster().nodes().get();
        }
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            produce(bootstrap, codec);
        }
        consume(bootstrap);
        shareConsume(bootstrap);
        if (comma >= 0) {
            MetricsScrape.fetch("http://127.0.0.1:" + target.substring(comma + 1) + "/metrics", WAIT);
        }
    }

    private static void produce(String bootstrap, String codec) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            Future<RecordMetadata> last = null;
            for (int i = 0; i < RECORDS / 5; i++) {
                last = producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i));
            }
            producer.flush();
            last.get();
        }
    }

    private static void consume(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + WAIT.toNanos();
            int seen = 0;
            while (seen < RECORDS && System.nanoTime() < deadline) {
                seen += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
    }

    private static void shareConsume(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, TOPIC);
        p.put("share.acknowledgement.mode", "explicit");
        try (KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + WAIT.toNanos();
            int seen = 0;
            while (seen < RECORDS && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    seen++;
                }
                consumer.commitSync();
            }
        }
    }
}
