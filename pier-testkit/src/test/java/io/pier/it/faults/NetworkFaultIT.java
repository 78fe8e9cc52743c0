package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.server.Pier;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Network faults between clients and the broker (reliability campaign, item 5), through a
 * {@link FaultyProxy} that the broker's PROXIED listener advertises; a DIRECT listener serves the
 * test's own checks and a consumer that the faults do not reach. Connections reset in the middle
 * of Produce, ShareFetch and ShareAcknowledge lose nothing and redeliver nothing accepted; a
 * partition that outlasts a record lock lets another consumer take the records, and the first
 * consumer's late acknowledgements are refused with INVALID_RECORD_STATE.
 */
@Timeout(180)
class NetworkFaultIT {
    private static final long LOCK_MS = 2_000;

    private Pier pier;
    private FaultyProxy proxy;
    private String proxied;
    private String direct;

    @BeforeEach
    void start() throws Exception {
        int brokerPort = freePort();
        int proxyPort = freePort();
        int directPort = freePort();
        pier = Pier.builder()
                .config("listeners", "PROXIED://127.0.0.1:" + brokerPort + ",DIRECT://127.0.0.1:" + directPort)
                .config("advertised.listeners",
                        "PROXIED://127.0.0.1:" + proxyPort + ",DIRECT://127.0.0.1:" + directPort)
                .config("listener.security.protocol.map", "PROXIED:PLAINTEXT,DIRECT:PLAINTEXT")
                .config("inter.broker.listener.name", "DIRECT")
                .config("group.share.min.record.lock.duration.ms", "1000")
                .start();
        proxy = new FaultyProxy(proxyPort, brokerPort);
        proxied = "127.0.0.1:" + proxyPort;
        direct = pier.bootstrapServers("DIRECT");
    }

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (pier != null) {
            pier.close();
        }
    }

    @Test
    void shouldLoseAndRedeliverNothingAcceptedWhenConnectionsResetMidRequest() throws Exception {
        String topic = "resets";
        String group = "resets-group";
        setUp(topic, group, Map.of());
        Map<Long, String> acked = new ConcurrentHashMap<>();
        Set<Long> accepted = ConcurrentHashMap.newKeySet();
        Set<Long> delivered = ConcurrentHashMap.newKeySet();
        List<String> violations = new CopyOnWriteArrayList<>();
        int records = 3_000;

        Thread producer = new Thread(() -> produce(topic, records, acked), "reset-producer");
        Thread consumer = new Thread(() -> consume(group, topic, delivered, accepted, violations), "reset-consumer");
        producer.start();
        consumer.start();
        // Resets every 100-400 ms while the load runs: some land inside a request, some inside a response.
        Random random = new Random();
        long chaosEnd = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        while (System.nanoTime() < chaosEnd) {
            Thread.sleep(100 + random.nextInt(300));
            proxy.resetAll();
        }
        producer.join(90_000);
        assertThat(producer.isAlive()).as("producer done").isFalse();
        // An ACCEPT whose answer a reset took away may have been applied, so that record never comes
        // back: done when every record was delivered and the group's start offset is at the end.
        long end = PartitionReader.readAll(direct, topic).size();
        await("every acknowledged record delivered and the share group at the log end").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> delivered.containsAll(acked.keySet()) && shareStartOffset(group, topic) == end);
        consumer.interrupt();
        consumer.join(30_000);

        System.out.printf("NetworkFaultIT: %d connections reset; %d records acknowledged, %d delivered, %d ACCEPTs"
                + " confirmed%n", proxy.resets(), acked.size(), delivered.size(), accepted.size());
        assertThat(proxy.resets()).as("connections reset").isGreaterThan(10);
        assertThat(violations).isEmpty();
        Map<Long, String> log = PartitionReader.readAll(direct, topic);
        assertThat(log).as("every acknowledged record in the log, with its value").containsAllEntriesOf(acked);
        assertThat(new java.util.HashSet<>(log.values())).as("no record written twice").hasSize(log.size());
    }

    @Test
    void shouldRefuseLateAcknowledgementsAfterAPartitionOutlastsTheLock() throws Exception {
        String topic = "partitioned";
        String group = "partitioned-group";
        setUp(topic, group, Map.of("share.record.lock.duration.ms", String.valueOf(LOCK_MS)));
        produce(topic, 20, new ConcurrentHashMap<>());

        try (KafkaShareConsumer<String, String> cut = shareConsumer(proxied, group, topic);
                KafkaShareConsumer<String, String> other = shareConsumer(direct, group, topic)) {
            List<ConsumerRecord<String, String>> held = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (held.isEmpty() && System.nanoTime() < deadline) {
                cut.poll(Duration.ofMillis(200)).forEach(held::add);
            }
            assertThat(held).as("records acquired by the consumer behind the proxy").isNotEmpty();

            // The network between it and the broker goes; its locks run out meanwhile.
            proxy.partition();
            Map<Long, Short> retaken = new HashMap<>();
            deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!retaken.keySet().containsAll(offsets(held)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : other.poll(Duration.ofMillis(200))) {
                    retaken.put(r.offset(), r.deliveryCount().orElse((short) -1));
                    other.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                other.commitSync(Duration.ofSeconds(5));
            }
            assertThat(retaken).as("the other consumer got and accepted the held records")
                    .containsKeys(offsets(held).toArray(Long[]::new));
            offsets(held).forEach(o -> assertThat(retaken.get(o)).as("delivery count of %d", o).isEqualTo((short) 2));

            proxy.heal();
            held.forEach(r -> cut.acknowledge(r, AcknowledgeType.ACCEPT));
            Map<TopicIdPartition, Optional<KafkaException>> late = cut.commitSync(Duration.ofSeconds(15));
            assertThat(late).as("a result for the late acknowledgement").isNotEmpty();
            assertThat(late.values()).allSatisfy(e -> assertThat(e).containsInstanceOf(InvalidRecordStateException.class));
        }
    }

    private static List<Long> offsets(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::offset).toList();
    }

    private void setUp(String topic, String group, Map<String, String> groupConfigs) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", direct))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            List<AlterConfigOp> ops = new ArrayList<>();
            ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            groupConfigs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
        }
    }

    /** An idempotent producer through the proxy; notes each acknowledged record's offset and value. */
    private void produce(String topic, int count, Map<Long, String> acked) {
        Properties p = new Properties();
        p.put("bootstrap.servers", proxied);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "2");
        p.put("request.timeout.ms", "3000");
        p.put("delivery.timeout.ms", "60000");
        p.put("reconnect.backoff.max.ms", "200");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                String value = "v" + i;
                var unused = producer.send(new ProducerRecord<>(topic, 0, null, value), (md, e) -> {
                    if (e == null) {
                        acked.put(md.offset(), value);
                    }
                });
                if (i % 50 == 0) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    /** ACCEPTs everything it gets through the proxy; an offset delivered after its ACCEPT was confirmed is a violation. */
    private void consume(String group, String topic, Set<Long> delivered, Set<Long> accepted, List<String> violations) {
        try (KafkaShareConsumer<String, String> consumer = shareConsumer(proxied, group, topic)) {
            while (!Thread.currentThread().isInterrupted()) {
                List<Long> sent = new ArrayList<>();
                try {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        delivered.add(r.offset());
                        if (accepted.contains(r.offset())) {
                            violations.add("offset " + r.offset() + " delivered again after a confirmed ACCEPT");
                        }
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                        sent.add(r.offset());
                    }
                    if (sent.isEmpty()) {
                        continue;
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(5));
                    if (!result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty)) {
                        accepted.addAll(sent);
                    }
                } catch (KafkaException | IllegalStateException e) {
                    // a reset mid-request: those acknowledgements are indeterminate
                    if (e instanceof InterruptException) {
                        return;
                    }
                }
            }
        }
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("request.timeout.ms", "3000");
        p.put("reconnect.backoff.max.ms", "200");
        KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(Set.of(topic));
        return consumer;
    }

    /** The share group's start offset on the topic's partition 0, as Admin lists it (-1: none yet). */
    private long shareStartOffset(String group, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", direct))) {
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin
                    .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo o = offsets.get(new TopicPartition(topic, 0));
            return o == null ? -1 : o.startOffset();
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
