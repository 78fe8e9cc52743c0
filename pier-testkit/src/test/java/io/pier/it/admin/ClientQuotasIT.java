package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.tools.ConfigCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Client quotas set and read with Kafka 4.4's {@code kafka-configs} and {@code Admin}
 * (DescribeClientQuotas, AlterClientQuotas): stored durably with the cluster metadata, checked
 * with Kafka's rules and messages.
 */
@Timeout(120)
class ClientQuotasIT {
    private static final long WAIT_MS = 30_000;

    /** Two windows of one second: the rate settles within seconds, not Kafka's default eleven. */
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("quota.window.num", "2");

    @Test
    void shouldSetDescribeAndDeleteClientQuotasWithKafkaConfigs() throws Exception {
        KafkaTool.Result added = configs("--alter", "--entity-type", "clients", "--entity-name", "app-1",
                "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152");
        assertThat(added.exitCode()).as(added.out() + added.err()).isZero();
        assertThat(added.out()).contains("Completed updating config for client app-1.");

        KafkaTool.Result described = configs("--describe", "--entity-type", "clients", "--entity-name", "app-1");
        assertThat(described.exitCode()).as(described.out() + described.err()).isZero();
        assertThat(described.out()).contains("Quota configs for client-id 'app-1' are ")
                .contains("producer_byte_rate=1048576.0").contains("consumer_byte_rate=2097152.0");

        KafkaTool.Result removed = configs("--alter", "--entity-type", "clients", "--entity-name", "app-1",
                "--delete-config", "consumer_byte_rate");
        assertThat(removed.exitCode()).as(removed.out() + removed.err()).isZero();
        String after = configs("--describe", "--entity-type", "clients", "--entity-name", "app-1").out();
        assertThat(after).contains("producer_byte_rate=1048576.0").doesNotContain("consumer_byte_rate");
    }

    @Test
    void shouldMatchFiltersAsKafkaDoesAndKeepQuotasAcrossARestart() throws Exception {
        ClientQuotaEntity alice = entity(ClientQuotaEntity.USER, "alice");
        ClientQuotaEntity defaultUser = entity(ClientQuotaEntity.USER, null);
        ClientQuotaEntity aliceOnApp = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice",
                ClientQuotaEntity.CLIENT_ID, "app"));
        try (Admin admin = admin()) {
            admin.alterClientQuotas(List.of(
                    set(alice, "producer_byte_rate", 1000.0),
                    set(defaultUser, "request_percentage", 50.5),
                    set(aliceOnApp, "consumer_byte_rate", 3000.0))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);

            assertThat(describe(admin, ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice")))))
                    .containsOnlyKeys(alice);
            assertThat(describe(admin, ClientQuotaFilter.contains(
                    List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice")))))
                    .containsOnlyKeys(alice, aliceOnApp);
            assertThat(describe(admin, ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.USER)))))
                    .containsExactly(Map.entry(defaultUser, Map.of("request_percentage", 50.5)));
            assertThat(describe(admin, ClientQuotaFilter.contains(
                    List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.CLIENT_ID)))))
                    .containsKey(aliceOnApp).doesNotContainKeys(alice, defaultUser); // other tests add client ids
        }
        PIER.restart();
        try (Admin admin = admin()) {
            assertThat(describe(admin, ClientQuotaFilter.all()))
                    .containsEntry(alice, Map.of("producer_byte_rate", 1000.0))
                    .containsEntry(defaultUser, Map.of("request_percentage", 50.5))
                    .containsEntry(aliceOnApp, Map.of("consumer_byte_rate", 3000.0));
        }
    }

    @Test
    void shouldRefuseWhatKafkaRefusesAndApplyTheRest() throws Exception {
        ClientQuotaEntity bob = entity(ClientQuotaEntity.USER, "bob");
        ClientQuotaEntity carol = entity(ClientQuotaEntity.USER, "carol");
        ClientQuotaEntity ipAndUser = new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "127.0.0.1",
                ClientQuotaEntity.USER, "dave"));
        try (Admin admin = admin()) {
            var result = admin.alterClientQuotas(List.of(
                    set(bob, "producer_byte_rate", 10.5),
                    set(carol, "consumer_byte_rate", 4096.0),
                    set(ipAndUser, "connection_creation_rate", 5.0),
                    set(entity(ClientQuotaEntity.IP, "127.0.0.1"), "producer_byte_rate", 5.0),
                    set(entity(ClientQuotaEntity.USER, "erin"), "request_percentage", -1.0))).values();
            assertThat(cause(result.get(bob))).isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("producer_byte_rate cannot be a fractional value.");
            result.get(carol).get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(cause(result.get(ipAndUser))).isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("IP entity should not be combined with User or ClientId");
            assertThat(cause(result.get(entity(ClientQuotaEntity.IP, "127.0.0.1"))))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("Invalid configuration key producer_byte_rate");
            assertThat(cause(result.get(entity(ClientQuotaEntity.USER, "erin"))))
                    .isInstanceOf(InvalidRequestException.class).hasMessageContaining("must be greater than 0");

            assertThat(describe(admin, ClientQuotaFilter.all())).containsKey(carol).doesNotContainKey(bob);
            assertThatThrownBy(() -> describe(admin, ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.IP),
                    ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.USER)))))
                    .hasCauseInstanceOf(InvalidRequestException.class);
        }
    }

    @Test
    void shouldHoldAProducerNearItsByteRateWithThrottleTimesAndNoErrors() throws Exception {
        int bytesPerSecond = 1 << 20;
        try (Admin admin = admin()) {
            admin.alterClientQuotas(List.of(set(entity(ClientQuotaEntity.CLIENT_ID, "slow-producer"),
                    "producer_byte_rate", bytesPerSecond))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.createTopics(List.of(new NewTopic("quota-topic", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "slow-producer");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        byte[] value = new byte[4096];
        int records = 6 * bytesPerSecond / value.length; // 6 MB
        long startNanos = System.nanoTime();
        double maxThrottleMs;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>("quota-topic", value)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get(WAIT_MS, TimeUnit.MILLISECONDS); // every record acknowledged: throttled, never refused
            }
            maxThrottleMs = metric(producer, "produce-throttle-time-max");
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        // Without the quota, 6 MB took 0.6 s here; held to 1 MB/s over a 1-2 s span they cannot
        // take less than about 4 s. Only the lower bound is checked: a slow machine is slower.
        assertThat(elapsedMs).as("6 MB at 1 MB/s").isGreaterThanOrEqualTo(3_500);
        assertThat(maxThrottleMs).as("throttle_time_ms reported to the producer").isPositive();
    }

    @Test
    void shouldHoldAConsumerNearItsByteRateAndStillDeliverEveryRecord() throws Exception {
        int bytesPerSecond = 1 << 20;
        byte[] value = new byte[4096];
        int records = 6 * bytesPerSecond / value.length; // 6 MB
        try (Admin admin = admin()) {
            admin.alterClientQuotas(List.of(set(entity(ClientQuotaEntity.CLIENT_ID, "slow-consumer"),
                    "consumer_byte_rate", bytesPerSecond))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.createTopics(List.of(new NewTopic("quota-fetch", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        fill("quota-fetch", records, value);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "slow-consumer");
        long startNanos = System.nanoTime();
        int read = 0;
        double maxThrottleMs;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(new TopicPartition("quota-fetch", 0)));
            consumer.seekToBeginning(List.of(new TopicPartition("quota-fetch", 0)));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(60_000);
            while (read < records && System.nanoTime() < deadline) {
                read += consumer.poll(Duration.ofMillis(200)).count();
            }
            maxThrottleMs = consumer.metrics().entrySet().stream()
                    .filter(e -> e.getKey().name().equals("fetch-throttle-time-max"))
                    .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).max().orElseThrow();
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        assertThat(read).isEqualTo(records);
        assertThat(elapsedMs).as("6 MB at 1 MB/s").isGreaterThanOrEqualTo(3_500);
        assertThat(maxThrottleMs).as("throttle_time_ms reported to the consumer").isPositive();
    }

    @Test
    void shouldHoldAShareConsumerNearItsByteRateAndDeliverEveryRecordOnce() throws Exception {
        int bytesPerSecond = 1 << 20;
        byte[] value = new byte[4096];
        int records = 6 * bytesPerSecond / value.length; // 6 MB
        try (Admin admin = admin()) {
            admin.alterClientQuotas(List.of(set(entity(ClientQuotaEntity.CLIENT_ID, "slow-share"),
                    "consumer_byte_rate", bytesPerSecond))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.createTopics(List.of(new NewTopic("quota-share", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "quota-share-group"),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        fill("quota-share", records, value);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "slow-share");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "quota-share-group");
        long startNanos = System.nanoTime();
        Set<Long> offsets = new HashSet<>();
        int deliveries = 0;
        double maxThrottleMs;
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props,
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of("quota-share"));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(60_000);
            while (offsets.size() < records && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    offsets.add(r.offset());
                    deliveries++;
                }
            }
            maxThrottleMs = consumer.metrics().entrySet().stream()
                    .filter(e -> e.getKey().name().equals("fetch-throttle-time-max"))
                    .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).max().orElseThrow();
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        assertThat(offsets).hasSize(records);
        // A throttled answer keeps its records, so none waits out an acquisition lock to come again.
        assertThat(deliveries).as("each record delivered once").isEqualTo(records);
        assertThat(elapsedMs).as("6 MB at 1 MB/s").isGreaterThanOrEqualTo(3_500);
        assertThat(maxThrottleMs).as("throttle_time_ms reported to the share consumer").isPositive();
    }

    @Test
    void shouldThrottleAClientOverItsRequestPercentage() throws Exception {
        try (Admin admin = admin()) {
            // 0.01% of a thread is 0.1 ms of request time per second: a few requests are over it.
            admin.alterClientQuotas(List.of(set(entity(ClientQuotaEntity.CLIENT_ID, "busy-client"),
                    "request_percentage", 0.01))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.createTopics(List.of(new NewTopic("quota-requests", 1, (short) 1))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        double busyThrottleMs = sendOneByOne("busy-client", 4);
        double freeThrottleMs = sendOneByOne("free-client", 4);
        assertThat(busyThrottleMs).as("throttle_time_ms reported to the client over its quota").isPositive();
        assertThat(freeThrottleMs).as("another client is not throttled").isZero();
    }

    /** Writes {@code records} copies of {@code value} to {@code topic}, without a quota. */
    private static void fill(String topic, int records, byte[] value) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                var unused = producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }
    }

    /** Sends {@code count} records one at a time as {@code clientId}; returns the largest throttle time reported. */
    private static double sendOneByOne(String clientId, int count) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>("quota-requests", new byte[10])).get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
            return metric(producer, "produce-throttle-time-max");
        }
    }

    private static double metric(KafkaProducer<?, ?> producer, String name) {
        return producer.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .findFirst().orElseThrow();
    }

    private static ClientQuotaEntity entity(String type, String name) {
        Map<String, String> entries = new HashMap<>();
        entries.put(type, name);
        return new ClientQuotaEntity(entries);
    }

    private static ClientQuotaAlteration set(ClientQuotaEntity entity, String key, double value) {
        return new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)));
    }

    private static Map<ClientQuotaEntity, Map<String, Double>> describe(Admin admin, ClientQuotaFilter filter)
            throws Exception {
        return admin.describeClientQuotas(filter).entities().get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    private static Throwable cause(org.apache.kafka.common.KafkaFuture<Void> future) {
        try {
            future.get(WAIT_MS, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    private static Admin admin() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        return Admin.create(props);
    }

    private static KafkaTool.Result configs(String... args) throws Exception {
        String[] all = Arrays.copyOf(args, args.length + 2);
        all[args.length] = "--bootstrap-server";
        all[args.length + 1] = PIER.bootstrapServers();
        return KafkaTool.run(ConfigCommand::main, all);
    }
}
