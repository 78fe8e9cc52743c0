package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import io.pier.testkit.TestCertificates;
import io.pier.testkit.UpstreamKafka;

/**
 * A gateway in front of an upstream that requires authentication: every connection the gateway
 * opens to it (the forwarding client, the share-state producers, the gateway-group consumer, the
 * config-topic clients, Admin) must log in with the {@code pier.gateway.upstream.} settings, while
 * the gateway's own clients connect without any. Each scenario produces, consumes with a consumer
 * group and with a share group through the gateway, then checks on the upstream itself, logged in
 * as its admin, that the records, the group's committed offsets and the share state are there.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GatewayUpstreamSaslIT {
    private static final int RECORDS = 60;

    @RegisterExtension
    static final UpstreamKafka PLAIN = UpstreamKafka.builder().sasl("PLAIN").build();

    @Test
    void shouldServeEverythingThroughAGatewayThatLogsInWithSaslPlain() throws Exception {
        assertRefusesUnauthenticatedClients(PLAIN);
        try (Pier gateway = gateway(PLAIN, UpstreamKafka.CLIENT_PASSWORD)) {
            produceAndConsumeThrough(gateway, PLAIN, "plain");
        }
    }

    @Test
    void shouldServeEverythingThroughAGatewayThatLogsInWithScramSha512OverTls(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir.resolve("certs"));
        try (UpstreamKafka scram = UpstreamKafka.builder().sasl("SCRAM-SHA-512").tls(certs).start()) {
            assertThat(scram.securityProtocol()).isEqualTo("SASL_SSL");
            assertRefusesUnauthenticatedClients(scram);
            try (Pier gateway = gateway(scram, UpstreamKafka.CLIENT_PASSWORD)) {
                produceAndConsumeThrough(gateway, scram, "scram");
            }

            // A gateway that does not trust the upstream's certificate authority is refused as fast
            Map<String, Object> untrusting = scram.clientSecurity(UpstreamKafka.CLIENT_USER,
                    UpstreamKafka.CLIENT_PASSWORD);
            untrusting.keySet().removeIf(k -> k.startsWith("ssl.truststore."));
            assertThatThrownBy(() -> gateway(scram.bootstrapServers(), untrusting).close())
                    .hasMessageContaining("authentication with the upstream cluster at [" + scram.bootstrapServers()
                            + "] failed")
                    .hasCauseInstanceOf(SslAuthenticationException.class);
        }
    }

    @Test
    void shouldRefuseToStartWhenTheUpstreamRejectsTheGatewaysPassword() {
        long start = System.nanoTime();
        // A start that failed closes what it opened: there is no Pier to close.
        assertThatThrownBy(() -> gateway(PLAIN, "not-the-password").close())
                .hasMessageContaining("authentication with the upstream cluster at [" + PLAIN.bootstrapServers()
                        + "] failed")
                .hasMessageContaining("pier.gateway.upstream.")
                .hasRootCauseInstanceOf(SaslAuthenticationException.class);
        // Refused at once, not after the 30 s the gateway gives an upstream it cannot reach.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }

    /** A gateway node whose upstream settings log in as the upstream's second user. */
    private static Pier gateway(UpstreamKafka upstream, String password) throws Exception {
        return gateway(upstream.bootstrapServers(), upstream.clientSecurity(UpstreamKafka.CLIENT_USER, password));
    }

    private static Pier gateway(String bootstrap, Map<String, Object> security) throws Exception {
        Pier.Builder builder = Pier.builder().config("pier.gateway.upstream.bootstrap.servers", bootstrap);
        security.forEach((k, v) -> builder.config("pier.gateway.upstream." + k, String.valueOf(v)));
        return builder.start();
    }

    /** The upstream really does require a login: a client without one gets nothing from it. */
    private static void assertRefusesUnauthenticatedClients(UpstreamKafka upstream) {
        try (Admin anonymous = Admin.create(Map.of("bootstrap.servers", upstream.bootstrapServers(),
                "request.timeout.ms", 2_000, "default.api.timeout.ms", 3_000))) {
            // The call fails after default.api.timeout.ms; the bound only keeps a hang from blocking
            // the build. 10 s once ran out while another test class loaded both cores (2026-12-07).
            assertThatThrownBy(() -> anonymous.describeCluster().nodes().get(60, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class);
        }
    }

    private static void produceAndConsumeThrough(Pier gateway, UpstreamKafka upstream, String prefix)
            throws Exception {
        String topic = prefix + "-orders";
        String group = prefix + "-readers";
        String shareGroup = prefix + "-workers";
        ShareClients clients = new ShareClients(gateway.bootstrapServers());

        // Given a topic created and filled through the gateway
        clients.createTopic(topic, 2);
        clients.setGroupConfig(shareGroup, "share.auto.offset.reset", "earliest");
        for (int p = 0; p < 2; p++) {
            clients.produce(topic, p, "p" + p, RECORDS / 2);
        }
        Set<String> produced = new HashSet<>();
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < RECORDS / 2; i++) {
                produced.add("p" + p + "-" + i);
            }
        }

        // When a consumer group reads it all through the gateway and commits
        try (KafkaConsumer<String, String> consumer = consumer(Map.of("bootstrap.servers", gateway.bootstrapServers(),
                "group.id", group))) {
            consumer.subscribe(List.of(topic));
            assertThat(values(readAll(consumer))).isEqualTo(produced);
            consumer.commitSync(Duration.ofSeconds(30));
        }

        // And a share group accepts every record through the gateway
        Map<String, Integer> accepted = new HashMap<>();
        try (KafkaShareConsumer<String, String> share = clients.consumer(shareGroup, "explicit")) {
            share.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (accepted.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : share.poll(Duration.ofMillis(200))) {
                    accepted.merge(r.value(), 1, Integer::sum);
                    share.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                share.commitSync(Duration.ofSeconds(10));
            }
        }
        assertThat(accepted.keySet()).isEqualTo(produced);
        assertThat(accepted.values()).containsOnly(1);

        // Then the upstream itself, asked by its admin, holds the records...
        Map<String, Object> direct = new HashMap<>(upstream.clientConfig());
        try (KafkaConsumer<String, String> consumer = consumer(direct)) {
            consumer.assign(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
            consumer.seekToBeginning(consumer.assignment());
            assertThat(values(readAll(consumer))).isEqualTo(produced);
        }
        try (Admin admin = Admin.create(upstream.clientConfig())) {
            // ...the consumer group's committed offsets...
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            assertThat(committed).containsOnlyKeys(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            assertThat(committed.values()).extracting(OffsetAndMetadata::offset).containsOnly((long) RECORDS / 2);

            // ...and the share state the gateway wrote with its transactional producers
            TopicDescription state = admin.describeTopics(List.of("__pier_share_state")).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get("__pier_share_state");
            List<TopicPartition> statePartitions = new ArrayList<>();
            state.partitions().forEach(p -> statePartitions.add(new TopicPartition("__pier_share_state", p.partition())));
            Map<String, Object> raw = new HashMap<>(upstream.clientConfig());
            raw.put("isolation.level", "read_committed");
            try (KafkaConsumer<byte[], byte[]> stateReader = new KafkaConsumer<>(raw, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                // (a transaction stays open across the state log's flushes for up to a second)
                long written = 0;
                long committedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (written == 0 && System.nanoTime() < committedBy) {
                    written = stateReader.endOffsets(statePartitions, Duration.ofSeconds(30)).values().stream()
                            .mapToLong(Long::longValue).sum();
                    Thread.sleep(written == 0 ? 100 : 0);
                }
                assertThat(written).as("records committed in __pier_share_state").isPositive();
                stateReader.assign(statePartitions);
                stateReader.seekToBeginning(statePartitions);
                int committedRecords = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (committedRecords == 0 && System.nanoTime() < deadline) {
                    committedRecords += stateReader.poll(Duration.ofMillis(200)).count();
                }
                assertThat(committedRecords).as("committed share-state records").isPositive();
            }
        }
    }

    private static KafkaConsumer<String, String> consumer(Map<String, Object> settings) {
        Map<String, Object> p = new HashMap<>(settings);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> consumer) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (out.size() < RECORDS && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    private static Set<String> values(List<ConsumerRecord<String, String>> records) {
        Set<String> out = new HashSet<>();
        records.forEach(r -> out.add(r.value()));
        return out;
    }
}
