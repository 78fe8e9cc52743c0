package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client-version matrix: the admin client, producer and consumer of kafka-clients 3.9, 4.2,
 * 4.3 and the current release, and the share consumer of those from 4.2 on, each in a child JVM
 * with only that release's jars (copied by the build into target/client-matrix/VERSION) running a
 * probe program (src/test/client-probe) against one Pier. The probes run three at a time, all
 * started before the first test waits; each test then checks from this JVM, with the current
 * client, what the probe left behind: its records readable, its share group's records all
 * acknowledged.
 */
@Timeout(150)
class ClientVersionMatrixIT {
    private static final String CURRENT = System.getProperty("pier.clientMatrix.current", "4.4.0");
    /** Every release of the matrix; the share consumer exists from 4.2. */
    private static final List<String> CLIENTS = List.of("3.9.1", "4.2.2", "4.3.2", CURRENT);
    private static final List<String> SHARE_CLIENTS = List.of("4.2.2", "4.3.2", CURRENT);
    private static final long PROBE_TIMEOUT_S = 100;
    private static final int CLIENT_RECORDS = 20;
    private static final int SHARE_RECORDS = 31;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    private static ExecutorService pool;
    private static final Map<String, Future<ProbeJvm.Result>> RUNS = new ConcurrentHashMap<>();

    static List<String> clients() {
        return CLIENTS;
    }

    static List<String> shareClients() {
        return SHARE_CLIENTS;
    }

    private static String suffix(String version) {
        return version.replace('.', '-');
    }

    @BeforeAll
    static void startProbes() {
        Path jarsRoot = Path.of(System.getProperty("pier.clientMatrix.dir", "target/client-matrix"));
        Path sources = Path.of(System.getProperty("pier.clientMatrix.src", "src/test/client-probe"));
        pool = Executors.newFixedThreadPool(3);
        // Share probes first: they run longest.
        for (String version : SHARE_CLIENTS) {
            RUNS.put("share " + version, pool.submit(() -> ProbeJvm.run(jarsRoot.resolve(version),
                    sources.resolve("ShareProbe.java"), PROBE_TIMEOUT_S, PIER.bootstrapServers(),
                    "matrix-share-" + suffix(version), "g-matrix-share-" + suffix(version))));
        }
        for (String version : CLIENTS) {
            RUNS.put("client " + version, pool.submit(() -> ProbeJvm.run(jarsRoot.resolve(version),
                    sources.resolve("ClientProbe.java"), PROBE_TIMEOUT_S, PIER.bootstrapServers(),
                    "matrix-client-" + suffix(version), "g-matrix-client-" + suffix(version))));
        }
    }

    @AfterAll
    static void stopPool() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(15, TimeUnit.SECONDS);
    }

    private static ProbeJvm.Result await(String run) throws Exception {
        ProbeJvm.Result result = RUNS.get(run).get(PROBE_TIMEOUT_S * 2, TimeUnit.SECONDS);
        System.out.println(result.describe());
        assertThat(result.ok()).as(result.describe()).isTrue();
        return result;
    }

    @ParameterizedTest
    @MethodSource("clients")
    void shouldAdministerProduceConsumeAndCommitWithEachClient(String version) throws Exception {
        ProbeJvm.Result result = await("client " + version);
        assertThat(result.output()).as(result.describe()).contains("CLIENT-PROBE version=" + version
                + " topics=OK produced=20 consumed=20 committed=20 groupListed=true result=OK");

        // The current client reads every record that release produced, as it wrote them.
        String topic = "matrix-client-" + suffix(version);
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < CLIENT_RECORDS; i++) {
            expected.add(version + "-" + i);
        }
        assertThat(readAll(topic, 2, CLIENT_RECORDS)).isEqualTo(expected);
    }

    @ParameterizedTest
    @MethodSource("shareClients")
    void shouldShareConsumeAndAcceptEveryRecordOnceWithEachClient(String version) throws Exception {
        ProbeJvm.Result result = await("share " + version);
        assertThat(result.output()).as(result.describe()).contains("SHARE-PROBE version=" + version
                + " produced=30 accepted=30 ackErrors=0 redelivered=0 result=OK");

        // The group's start offset is past every record: all were acknowledged, none is left to deliver.
        String group = "g-matrix-share-" + suffix(version);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                    Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                    .get(30, TimeUnit.SECONDS);
            assertThat(offsets.get(new TopicPartition("matrix-share-" + suffix(version), 0)))
                    .as("share-group offsets %s", offsets)
                    .satisfies(info -> assertThat(info.startOffset()).isEqualTo(SHARE_RECORDS));
        }
    }

    private static Set<String> readAll(String topic, int partitions, int count) {
        Map<String, Object> props = Map.of("bootstrap.servers", PIER.bootstrapServers(),
                "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName());
        Set<String> values = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        return values;
    }
}
