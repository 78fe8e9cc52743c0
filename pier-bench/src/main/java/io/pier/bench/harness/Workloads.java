package io.pier.bench.harness;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The client side of every workload, run from this JVM with the same kafka-clients against
 * whichever broker {@code bootstrap} points at. Every loop is bounded by a record count and a
 * deadline.
 */
final class Workloads implements AutoCloseable {
    /**
     * Result of a share or consumer-group consumption run: records/s from the first record, and the
     * wait for it; the broker's CPU over the rate's window and, for a gateway, its upstream's over
     * the same window (-1 when there is none).
     */
    record ConsumeRun(double recordsPerSec, double firstRecordMs, long records, boolean complete, long brokerCpuNanos,
            long upstreamCpuNanos) {
        Throughput throughput() {
            return new Throughput(recordsPerSec, records, brokerCpuNanos);
        }
    }

    /**
     * Result of a throughput run: records per second, how many records it moved, and the broker
     * CPU time over the same window as the rate when the run measured it itself (-1: the caller
     * measures it around the whole run).
     */
    record Throughput(double recordsPerSec, long records, long brokerCpuNanos) {
        Throughput(double recordsPerSec, long records) {
            this(recordsPerSec, records, -1);
        }
    }

    /** Result of a transactional produce run: its throughput, how many transactions, their mean commitTransaction time. */
    record TxnRun(Throughput throughput, int transactions, double commitMeanMs) {}

    /**
     * Produce-to-ACCEPT latency percentiles in milliseconds, and produce-to-delivery ones (the
     * record returned by {@code poll()}), which show how much of the first is the ACCEPT's leg.
     */
    record Latency(double p50, double p99, double p999, int samples, double deliveredP50, double deliveredP99) {}

    /**
     * The broker refused a setting the workload needs (a group config it does not support yet):
     * the row shows "not supported" with this message rather than a figure.
     */
    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;

        Unsupported(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final String bootstrap;
    /** Added to every client's settings: the security protocol and its TLS and SASL settings, or nothing. */
    private final Map<String, String> clientSettings;
    private final long capNanos;
    private final Admin admin;
    private final LongSupplier brokerCpuNanos;
    /**
     * The CPU time so far of what the broker forwards to (a gateway's upstream cluster), read with
     * {@link #brokerCpuNanos} at the same instants, so the two split one window; -1 without one.
     */
    private final LongSupplier upstreamCpuNanos;
    /** Put before every topic name this instance hands to a client, so an unmeasured pass leaves the measured topics alone. */
    private final String topicPrefix;
    /**
     * Numbers the group names and transactional ids, shared by every instance: the security rows
     * run several against one broker, and a share group reused by name would find its records
     * already accepted.
     */
    private static final AtomicInteger GROUP_SEQ = new AtomicInteger();

    /** {@code brokerCpuNanos}: the broker's CPU time so far, read where a run's rate window opens and closes. */
    Workloads(String bootstrap, Duration cap, LongSupplier brokerCpuNanos) {
        this(bootstrap, cap, brokerCpuNanos, Map.of());
    }

    /**
     * {@code clientSettings}: added to the settings of every client these workloads create (the
     * admin client included), e.g. {@code security.protocol=SSL} and its trust store, for a broker
     * listener other than PLAINTEXT at {@code bootstrap}.
     */
    Workloads(String bootstrap, Duration cap, LongSupplier brokerCpuNanos, Map<String, String> clientSettings) {
        this(bootstrap, cap, brokerCpuNanos, clientSettings, "");
    }

    /**
     * {@code topicPrefix}: put before every topic name given to these workloads, where it reaches
     * a client (the broker's warm-up pass reads and writes topics of its own this way).
     */
    Workloads(String bootstrap, Duration cap, LongSupplier brokerCpuNanos, Map<String, String> clientSettings,
            String topicPrefix) {
        this(bootstrap, cap, brokerCpuNanos, () -> -1, clientSettings, topicPrefix);
    }

    /**
     * {@code upstreamCpuNanos}: for a broker that forwards to another cluster (a Pier gateway in
     * front of Kafka), that cluster's CPU time so far, read at the instants the broker's is, so a
     * consumption run reports both over its window.
     */
    Workloads(String bootstrap, Duration cap, LongSupplier brokerCpuNanos, LongSupplier upstreamCpuNanos,
            Map<String, String> clientSettings, String topicPrefix) {
        this.upstreamCpuNanos = upstreamCpuNanos;
        this.topicPrefix = topicPrefix;
        this.bootstrap = bootstrap;
        this.clientSettings = Map.copyOf(clientSettings);
        this.brokerCpuNanos = brokerCpuNanos;
        this.capNanos = cap.toNanos();
        Properties p = clientProperties();
        p.put("client.id", "bench-admin");
        this.admin = Admin.create(p);
    }

    /** This instance's topic prefix, for other workloads against the same broker in the same pass. */
    String topicPrefix() {
        return topicPrefix;
    }

    /** The name a client is given for {@code topic}. */
    private String t(String topic) {
        return topicPrefix + topic;
    }

    /**
     * Creates a topic and waits until every partition has a leader in the broker's metadata, so the
     * first produce does not race the broker applying it (Kafka answers NOT_LEADER_OR_FOLLOWER
     * meanwhile, and the idempotent producer's retries can then loop on OUT_OF_ORDER_SEQUENCE).
     */
    void createTopic(String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(t(topic), partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try {
                TopicDescription d = admin.describeTopics(List.of(t(topic))).allTopicNames()
                        .get(10, TimeUnit.SECONDS).get(t(topic));
                if (d.partitions().size() == partitions
                        && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                    Thread.sleep(200);
                    return;
                }
            } catch (ExecutionException e) {
                // not known yet
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("topic " + topic + " has no leaders after 30 s");
    }

    /** {@code bootstrap.servers} and the {@link #clientSettings}: where every client's settings start. */
    private Properties clientProperties() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.putAll(clientSettings);
        return p;
    }

    private String newShareGroup(String label) throws Exception {
        return newShareGroup(label, null);
    }

    /**
     * A new share group name, its GROUP config resource set (incrementalAlterConfigs) to
     * {@code share.auto.offset.reset=earliest} and, unless {@code isolation} is null,
     * {@code share.isolation.level=isolation}, both in one request. A broker that refuses the
     * config with INVALID_CONFIG throws {@link Unsupported}.
     */
    private String newShareGroup(String label, String isolation) throws Exception {
        String group = "bench-" + label + "-" + GROUP_SEQ.incrementAndGet();
        List<AlterConfigOp> ops = new ArrayList<>();
        ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
        if (isolation != null) {
            ops.add(new AlterConfigOp(new ConfigEntry("share.isolation.level", isolation), AlterConfigOp.OpType.SET));
        }
        try {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all()
                    .get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (isolation != null && e.getCause() instanceof InvalidConfigurationException refused) {
                throw new Unsupported("the broker refused share.isolation.level=" + isolation + " on the group: "
                        + refused.getMessage(), e);
            }
            throw e;
        }
        return group;
    }

    private KafkaProducer<byte[], byte[]> producer() {
        return producer(null);
    }

    /** acks=all, idempotent, client defaults otherwise; {@code lingerMs} null keeps the client's default. */
    private KafkaProducer<byte[], byte[]> producer(Integer lingerMs) {
        Properties p = clientProperties();
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        if (lingerMs != null) {
            p.put("linger.ms", lingerMs.toString());
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * Produces {@code count} records of {@code size} bytes (acks=all, idempotent, client defaults
     * otherwise), round-robin over the partitions; returns acknowledged records per second.
     */
    Throughput produce(String topic, int partitions, int count, int size) {
        return produce(topic, partitions, count, size, 0);
    }

    /**
     * As {@link #produce(String, int, int, int)}, record i keyed {@code "k" + (i % keys)} when
     * {@code keys} is above 0 (null keys otherwise).
     */
    Throughput produce(String topic, int partitions, int count, int size, int keys) {
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        LongAdder acked = new LongAdder();
        AtomicLong failures = new AtomicLong();
        AtomicReference<Exception> firstFailure = new AtomicReference<>();
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < count; i++) {
                byte[] key = keys > 0 ? ("k" + (i % keys)).getBytes(java.nio.charset.StandardCharsets.UTF_8) : null;
                var unused = producer.send(new ProducerRecord<>(t(topic), i % partitions, key, value), (md, e) -> { // the callback counts failures
                    if (e == null) {
                        acked.increment();
                    } else {
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, e);
                    }
                });
                if ((i & 1023) == 0 && System.nanoTime() - t0 > capNanos) {
                    System.err.println("[bench]   produce hit the time cap after " + i + " records");
                    break;
                }
            }
            producer.flush();
        }
        long elapsed = System.nanoTime() - t0;
        if (failures.get() > 0) {
            System.err.println("[bench]   " + failures.get() + " produce failures, the first: " + firstFailure.get());
        }
        return new Throughput(acked.sum() * 1e9 / elapsed, acked.sum());
    }

    /**
     * Produces {@code count} records of {@code size} bytes with one transactional producer
     * ({@code transactional.id} new for the run, acks=all, idempotent, client defaults otherwise),
     * round-robin over the partitions, in transactions of {@code perTransaction} records each
     * (beginTransaction, the sends, commitTransaction, which waits for them all). Records/s and
     * broker CPU from just after {@code initTransactions()} to the last commit's answer, counting
     * committed records only; stops after the transaction that crosses the time cap. A failed
     * send fails its commit, and so the run.
     */
    TxnRun produceTransactional(String topic, int partitions, int count, int size, int perTransaction) {
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        Properties p = clientProperties();
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("transactional.id", "bench-txn-" + topic + "-" + GROUP_SEQ.incrementAndGet());
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            long t0 = System.nanoTime();
            long cpu0 = brokerCpuNanos.getAsLong();
            long commitNanos = 0;
            int committed = 0;
            int transactions = 0;
            while (committed < count) {
                int n = Math.min(perTransaction, count - committed);
                producer.beginTransaction();
                for (int i = 0; i < n; i++) {
                    // A failed send fails commitTransaction, which throws: no callback needed.
                    var unused = producer.send(new ProducerRecord<>(t(topic), (committed + i) % partitions, null, value));
                }
                long c0 = System.nanoTime();
                producer.commitTransaction();
                commitNanos += System.nanoTime() - c0;
                committed += n;
                transactions++;
                if (System.nanoTime() - t0 > capNanos && committed < count) {
                    System.err.println("[bench]   transactional produce hit the time cap after " + committed + " records");
                    break;
                }
            }
            long elapsed = System.nanoTime() - t0;
            long cpu1 = brokerCpuNanos.getAsLong();
            double commitMeanMs = transactions == 0 ? Double.NaN : commitNanos / 1e6 / transactions;
            System.err.printf(Locale.ROOT, "[bench]   %s: %,d transactions of %,d records, commitTransaction %.2f ms "
                    + "each on average (its flush of the sends included)%n", p.get("transactional.id"), transactions,
                    perTransaction, commitMeanMs);
            return new TxnRun(new Throughput(committed * 1e9 / elapsed, committed,
                    cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1), transactions, commitMeanMs);
        }
    }

    /**
     * Share-group consumption of a pre-filled topic by {@code consumers} consumers until
     * {@code target} records are accepted. Explicit mode acknowledges each record; with
     * {@code releaseEvery > 0} every record whose offset is a multiple of it is RELEASEd on its
     * first delivery and ACCEPTed when it comes back.
     */
    ConsumeRun share(String topic, int consumers, boolean explicit, int target, int releaseEvery) throws Exception {
        return share(topic, consumers, explicit, target, releaseEvery, null);
    }

    /**
     * {@link #share(String, int, boolean, int, int)} with the group's {@code share.isolation.level}
     * set to {@code isolation} first (null: left at the broker's default); throws
     * {@link Unsupported} when the broker refuses that config.
     */
    ConsumeRun share(String topic, int consumers, boolean explicit, int target, int releaseEvery, String isolation)
            throws Exception {
        String group = newShareGroup(topic + "-" + consumers + (explicit ? "e" : "i")
                + (isolation == null ? "" : "-" + isolation.replace('_', '-')), isolation);
        LongAdder accepted = new LongAdder();
        Window window = new Window();
        runConsumers(consumers, "share-", c -> {
            Properties p = member(group, c, "share.acknowledgement.mode", explicit ? "explicit" : "implicit");
            try (KafkaShareConsumer<byte[], byte[]> consumer =
                    new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(t(topic)));
                window.pollWhileOpen(() -> consumer.poll(Duration.ofMillis(100)), records -> {
                    int ok = 0;
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        if (!explicit) {
                            ok++;
                        } else if (releaseEvery > 0 && r.offset() % releaseEvery == 0
                                && r.deliveryCount().orElse((short) 1) <= 1) {
                            consumer.acknowledge(r, AcknowledgeType.RELEASE);
                        } else {
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                            ok++;
                        }
                    }
                    accepted.add(ok);
                    if (accepted.sum() >= target) {
                        window.reached();
                    }
                });
                consumer.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                System.err.println("[bench]   share consumer failed: " + e);
            }
        });
        return window.result("share", accepted.sum(), target);
    }

    /**
     * Explicit-mode share consumption of a pre-filled topic by {@code consumers} consumers of a new
     * group with {@code groupConfigs} set as well, every {@code every}-th offset (none when {@code
     * every} is 0) getting {@code verdict} on its first delivery (RELEASE: accepted when it comes back; REJECT: it dies), every
     * other record ACCEPTed, until {@code target} records were settled (accepted or rejected).
     */
    ConsumeRun shareVerdicts(String topic, int consumers, int target, int every, AcknowledgeType verdict,
            Map<String, String> groupConfigs) throws Exception {
        String group = newShareGroup(topic + "-" + consumers + "-" + verdict.name().toLowerCase(Locale.ROOT), null);
        List<AlterConfigOp> ops = new ArrayList<>();
        groupConfigs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        try {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all()
                    .get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof InvalidConfigurationException refused) {
                throw new Unsupported("the broker refused the group configs " + groupConfigs.keySet() + ": "
                        + refused.getMessage(), e);
            }
            throw e;
        }
        LongAdder settled = new LongAdder();
        Window window = new Window();
        runConsumers(consumers, "share-", c -> {
            Properties p = member(group, c, "share.acknowledgement.mode", "explicit");
            try (KafkaShareConsumer<byte[], byte[]> consumer =
                    new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(t(topic)));
                window.pollWhileOpen(() -> consumer.poll(Duration.ofMillis(100)), records -> {
                    int done = 0;
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        boolean first = r.deliveryCount().orElse((short) 1) <= 1;
                        if (every > 0 && r.offset() % every == 0 && first) {
                            consumer.acknowledge(r, verdict);
                            done += verdict == AcknowledgeType.REJECT ? 1 : 0;
                        } else {
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                            done++;
                        }
                    }
                    settled.add(done);
                    if (settled.sum() >= target) {
                        window.reached();
                    }
                });
                consumer.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                System.err.println("[bench]   share consumer failed: " + e);
            }
        });
        return window.result("share", settled.sum(), target);
    }

    /**
     * Creates a dead-letter topic for share groups (KIP-1191): named {@code dlq.} + the run's topic
     * name, one partition, {@code errors.deadletterqueue.group.enable=true}; returns its name.
     */
    String createDeadLetterTopic(String label) throws Exception {
        String name = "dlq." + t(label);
        admin.createTopics(List.of(new NewTopic(name, 1, (short) 1)
                .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get(60, TimeUnit.SECONDS);
        return name;
    }

    /** Records in partition 0 of {@code topic} (its end offset), waiting up to {@code waitMs} for {@code expected}. */
    long recordsIn(String topic, long expected, long waitMs) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        long n;
        do {
            n = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS)
                    .offset();
            if (n >= expected) {
                return n;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        return n;
    }

    /**
     * Consumer-group consumption of a pre-filled topic (offsets from 0 in every partition, as the
     * fill leaves them) by {@code consumers} {@link KafkaConsumer}s subscribed in one new group with
     * {@code group.protocol=protocol}, reading from the earliest offset, each committing with
     * {@code commitSync()} after every poll that returned records, until every one of the
     * {@code target} records was read. A record read twice (its partition moved in a rebalance
     * before its commit) counts once. When no consumer can run (the broker refuses the group
     * protocol, say), the first consumer's failure is thrown, so the row shows {@code n/a} rather
     * than a rate of nothing.
     *
     * <p>With more than one consumer, each keeps the partitions it is given paused until the group
     * has settled (every partition owned, the counts at most one apart), so the rate is that of
     * {@code consumers} consumers sharing the topic. Left alone, the first member to be assigned
     * reads everything before the others get partitions on a broker that moves them late (Kafka's
     * consumer protocol hands them over on the next 5 s heartbeat), and the row would measure one
     * consumer on one broker and a rebalance on another. The wait to settle is before the first
     * record, so outside the window; the first-record row comes from the one-consumer run.
     */
    ConsumeRun group(String topic, int partitions, String protocol, int consumers, int target) throws Exception {
        String group = "bench-group-" + protocol + "-" + consumers + "c-" + GROUP_SEQ.incrementAndGet();
        // Per partition, the offset after the last record read: the distinct records read are their sum.
        AtomicLongArray readUpTo = new AtomicLongArray(partitions);
        LongAdder read = new LongAdder();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        // Per consumer, the records it was handed (re-reads included): shows how the group split the work.
        AtomicLongArray perConsumer = new AtomicLongArray(consumers);
        // The time the consumers spent in commitSync, and how many calls: the broker's commit path.
        LongAdder commitNanos = new LongAdder();
        LongAdder commits = new LongAdder();
        SettledGroup settled = new SettledGroup(consumers, partitions);
        Window window = new Window();
        runConsumers(consumers, "group-", c -> {
            Properties p = member(group, c, "group.protocol", protocol, "auto.offset.reset", "earliest",
                    "enable.auto.commit", "false");
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(t(topic)), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> revoked) {}

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                        if (!settled.update(c, consumer.assignment().size())) {
                            consumer.pause(assigned);
                        }
                    }
                });
                window.pollWhileOpen(() -> {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    if (settled.update(c, consumer.assignment().size()) && !consumer.paused().isEmpty()) {
                        consumer.resume(consumer.paused());
                    }
                    return records;
                }, records -> {
                    perConsumer.addAndGet(c, records.count());
                    for (TopicPartition tp : records.partitions()) {
                        List<ConsumerRecord<byte[], byte[]>> got = records.records(tp);
                        long end = got.get(got.size() - 1).offset() + 1;
                        long before = readUpTo.getAndAccumulate(tp.partition(), end, Math::max);
                        if (end > before) {
                            read.add(end - before);
                        }
                    }
                    long t0 = System.nanoTime();
                    consumer.commitSync();
                    commitNanos.add(System.nanoTime() - t0);
                    commits.increment();
                    if (read.sum() >= target) {
                        window.reached();
                    }
                });
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
            } catch (RuntimeException e) {
                if (!failure.compareAndSet(null, e)) {
                    return;
                }
                System.err.println("[bench]   group consumer failed: " + e);
            }
        });
        RuntimeException e = failure.get();
        if (e != null && read.sum() == 0) {
            throw e;
        }
        System.err.printf(Locale.ROOT, "[bench]   %s: %,d commits, %.0f µs each on average%s%n", group,
                commits.sum(), commits.sum() == 0 ? Double.NaN : commitNanos.sum() / 1e3 / commits.sum(),
                consumers == 1 ? "" : "; settled after " + settled.settledAfterMs() + " ms; records per consumer: "
                        + perConsumer);
        return window.result("group", read.sum(), target);
    }

    /**
     * Whether a group's consumers have settled: every partition owned and no consumer more than
     * one partition ahead of another, from the assignment sizes each consumer reports after its
     * polls. Once settled it stays so for the run.
     */
    private static final class SettledGroup {
        private final AtomicIntegerArray owned;
        private final int partitions;
        private final long start = System.nanoTime();
        private final AtomicLong settledNanos = new AtomicLong();

        SettledGroup(int consumers, int partitions) {
            this.owned = new AtomicIntegerArray(consumers);
            this.partitions = partitions;
        }

        /** Notes consumer {@code c}'s assignment size; returns whether the group has settled. */
        boolean update(int c, int size) {
            if (settledNanos.get() != 0) {
                return true;
            }
            owned.set(c, size);
            int sum = 0;
            int min = Integer.MAX_VALUE;
            int max = 0;
            for (int i = 0; i < owned.length(); i++) {
                int n = owned.get(i);
                sum += n;
                min = Math.min(min, n);
                max = Math.max(max, n);
            }
            if (sum == partitions && max - min <= 1) {
                settledNanos.compareAndSet(0, System.nanoTime());
                return true;
            }
            return false;
        }

        long settledAfterMs() {
            long at = settledNanos.get();
            return at == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(at - start);
        }
    }

    /** The settings of consumer {@code c} of {@code group}, named after both, plus {@code keyValues}. */
    private Properties member(String group, int c, String... keyValues) {
        Properties p = clientProperties();
        p.put("group.id", group);
        p.put("client.id", group + "-c" + c);
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    /**
     * Runs one consumer loop per thread, {@code consumers} of them, and waits for them all (a loop
     * ends by the time cap, so the wait is bounded too).
     */
    private void runConsumers(int consumers, String name, IntConsumer loop) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            int index = c;
            Thread t = new Thread(() -> loop.accept(index), name + c);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(TimeUnit.NANOSECONDS.toMillis(capNanos) + 30_000);
        }
    }

    /**
     * The window a consumption run's rate and broker CPU are taken over, shared by its consumer
     * threads: from the first record any of them received to the moment the target was reached,
     * so the group join before it and the consumers' close after it stay out. It opens at
     * construction, just before the consumers are created, which is where the wait for the first
     * record is counted from.
     */
    private final class Window {
        private final long start = System.nanoTime();
        private final long deadline = start + capNanos;
        private final AtomicLong firstNanos = new AtomicLong();
        private final AtomicLong doneNanos = new AtomicLong();
        private final AtomicLong firstCpu = new AtomicLong(-1);
        private final AtomicLong doneCpu = new AtomicLong(-1);
        private final AtomicLong firstUpstreamCpu = new AtomicLong(-1);
        private final AtomicLong doneUpstreamCpu = new AtomicLong(-1);
        private final AtomicBoolean stop = new AtomicBoolean();

        /**
         * One consumer's loop: polls until the target is reached (by any consumer) or the time cap
         * is hit, handing each non-empty batch to {@code handle} once the window has noted it.
         */
        void pollWhileOpen(Supplier<ConsumerRecords<byte[], byte[]>> poll,
                Consumer<ConsumerRecords<byte[], byte[]>> handle) {
            while (!stop.get() && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> records = poll.get();
                if (!records.isEmpty()) {
                    received();
                    handle.accept(records);
                }
            }
        }

        private void received() {
            if (firstNanos.compareAndSet(0, System.nanoTime())) {
                firstCpu.set(brokerCpuNanos.getAsLong());
                firstUpstreamCpu.set(upstreamCpuNanos.getAsLong());
            }
        }

        void reached() {
            if (doneNanos.compareAndSet(0, System.nanoTime())) {
                doneCpu.set(brokerCpuNanos.getAsLong());
                doneUpstreamCpu.set(upstreamCpuNanos.getAsLong());
            }
            stop.set(true);
        }

        ConsumeRun result(String what, long records, int target) {
            long first = firstNanos.get();
            long done = doneNanos.get();
            boolean complete = done != 0;
            long endCpu = doneCpu.get();
            long endUpstreamCpu = doneUpstreamCpu.get();
            if (!complete) {
                System.err.println("[bench]   " + what + " run stopped at the time cap: " + records + "/" + target);
                done = System.nanoTime();
                endCpu = brokerCpuNanos.getAsLong();
                endUpstreamCpu = upstreamCpuNanos.getAsLong();
            }
            double rate = first == 0 ? 0 : records * 1e9 / Math.max(1, done - first);
            double ttfr = first == 0 ? Double.NaN : (first - start) / 1e6;
            long cpu = firstCpu.get() >= 0 && endCpu >= 0 ? endCpu - firstCpu.get() : -1;
            long upstreamCpu = firstUpstreamCpu.get() >= 0 && endUpstreamCpu >= 0
                    ? endUpstreamCpu - firstUpstreamCpu.get() : -1;
            return new ConsumeRun(rate, ttfr, records, complete, cpu, upstreamCpu);
        }
    }

    /**
     * A plain consumer (assign, no group) reading the {@code target} records of {@code topic} from
     * the start, {@code passes} times, each pass a new consumer; records/s and broker CPU over the
     * passes' windows only (first record received to last, each pass), so the run is long enough
     * for a CPU reading in clock ticks while consumer set-up and the client's wait at the end of the
     * log (a fetch parked for {@code fetch.max.wait.ms} once it has caught up) stay out of it.
     */
    Throughput plainFetch(String topic, int partitions, int target, int passes) {
        long deadline = System.nanoTime() + capNanos;
        long nanos = 0;
        long cpu = 0;
        long got = 0;
        for (int pass = 0; pass < passes && System.nanoTime() < deadline; pass++) {
            Throughput one = plainFetchPass(topic, partitions, target, deadline);
            if (one.records() == 0) {
                break;
            }
            got += one.records();
            nanos += Math.round(one.records() * 1e9 / one.recordsPerSec());
            cpu = cpu < 0 || one.brokerCpuNanos() < 0 ? -1 : cpu + one.brokerCpuNanos();
        }
        return new Throughput(nanos == 0 ? 0 : got * 1e9 / nanos, got, cpu);
    }

    private Throughput plainFetchPass(String topic, int partitions, int target, long deadline) {
        Properties p = clientProperties();
        p.put("client.id", "bench-fetch");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(t(topic), i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long first = 0;
            long firstCpu = -1;
            long got = 0;
            while (got < target && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty() && first == 0) {
                    first = System.nanoTime();
                    firstCpu = brokerCpuNanos.getAsLong();
                }
                got += records.count();
            }
            long end = System.nanoTime();
            long cpu = firstCpu >= 0 ? brokerCpuNanos.getAsLong() - firstCpu : -1;
            return new Throughput(first == 0 ? 0 : got * 1e9 / Math.max(1, end - first), got, cpu);
        }
    }

    /**
     * One explicit share consumer; records produced at {@code rate}/s for {@code seconds}. Latency
     * of a record: from just before {@code send()} to the consumer's acknowledgement commit
     * callback confirming its ACCEPT. Warm-up records are sent until the consumer gets one (Kafka
     * assigns partitions on a later heartbeat), and are not counted. {@code lingerMs} null leaves the
     * producer's {@code linger.ms} at the client default.
     */
    Latency latency(String topic, int rate, int seconds, Integer lingerMs) throws Exception {
        createTopic(topic, 1);
        String group = newShareGroup("latency");
        int total = rate * seconds;
        long[] samples = new long[total];
        AtomicLong sampleCount = new AtomicLong();
        long[] delivered = new long[total];
        AtomicLong deliveredCount = new AtomicLong();
        AtomicBoolean gotAny = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        long hardDeadline = System.nanoTime() + capNanos + TimeUnit.SECONDS.toNanos(seconds);
        Properties p = clientProperties();
        p.put("group.id", group);
        p.put("client.id", group + "-c");
        p.put("share.acknowledgement.mode", "explicit");
        Thread consumerThread = new Thread(() -> {
            Map<Long, Long> sentAt = new HashMap<>();
            try (KafkaShareConsumer<byte[], byte[]> consumer =
                    new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.setAcknowledgementCommitCallback((Map<TopicIdPartition, Set<Long>> offsets, Exception e) -> {
                    long now = System.nanoTime();
                    for (Set<Long> set : offsets.values()) {
                        for (Long o : set) {
                            Long sent = sentAt.remove(o);
                            if (sent != null && e == null) {
                                long i = sampleCount.getAndIncrement();
                                if (i < samples.length) {
                                    samples[(int) i] = now - sent;
                                }
                            }
                        }
                    }
                });
                consumer.subscribe(List.of(t(topic)));
                while (!stop.get() && System.nanoTime() < hardDeadline) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    long polledAt = System.nanoTime();
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        gotAny.set(true);
                        ByteBuffer v = ByteBuffer.wrap(r.value());
                        if (v.get() == 1) {
                            long sent = v.getLong();
                            sentAt.put(r.offset(), sent);
                            long i = deliveredCount.getAndIncrement();
                            if (i < delivered.length) {
                                delivered[(int) i] = polledAt - sent;
                            }
                        }
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                consumer.commitSync(Duration.ofSeconds(5));
                consumer.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                System.err.println("[bench]   latency consumer failed: " + e);
            }
        }, "latency-consumer");
        consumerThread.start();
        try (KafkaProducer<byte[], byte[]> producer = producer(lingerMs)) {
            long warmDeadline = System.nanoTime() + capNanos;
            while (!gotAny.get() && System.nanoTime() < warmDeadline) {
                var unused = producer.send(new ProducerRecord<>(t(topic), 0, null, payload(0, 0))); // repeated until one arrives
                Thread.sleep(50);
            }
            Thread.sleep(500);
            long t0 = System.nanoTime();
            long interval = 1_000_000_000L / rate;
            // One more second of unmeasured records after the measured ones, so the last measured
            // ACCEPTs ride on fetches that return at once instead of waiting out fetch.max.wait.ms.
            for (int i = 0; i < total + rate; i++) {
                long due = t0 + i * interval;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                // A failed send shows up as a missing latency sample (sampleCount below total).
                var unused = producer.send(new ProducerRecord<>(t(topic), 0, null, payload(i < total ? 1 : 0, System.nanoTime())));
            }
            producer.flush();
        }
        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (sampleCount.get() < total && System.nanoTime() < waitUntil) {
            Thread.sleep(20);
        }
        stop.set(true);
        consumerThread.join(30_000);
        int n = (int) Math.min(sampleCount.get(), samples.length);
        if (n < total) {
            System.err.println("[bench]   latency: only " + n + "/" + total + " ACCEPTs confirmed");
        }
        long[] s = Arrays.copyOf(samples, n);
        Arrays.sort(s);
        long[] d = Arrays.copyOf(delivered, (int) Math.min(deliveredCount.get(), delivered.length));
        Arrays.sort(d);
        return new Latency(pct(s, 0.50), pct(s, 0.99), pct(s, 0.999), n, pct(d, 0.50), pct(d, 0.99));
    }

    private static byte[] payload(int flag, long sendNanos) {
        ByteBuffer b = ByteBuffer.allocate(100);
        b.put((byte) flag).putLong(sendNanos);
        return b.array();
    }

    private static double pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
