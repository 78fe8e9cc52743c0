package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.ChildBroker;
import io.pier.testkit.UpstreamKafka;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dead letters (KIP-1191) across {@code kill -9}: Pier promises exactly one dead letter per dead
 * record, also when the broker dies between appending a letter and persisting ARCHIVED. A broker in
 * a child process is SIGKILLed at random moments and restarted on the same data folder while two
 * explicit-mode share consumers work through records produced up front: each record is, by a
 * function of the seed and its value, to be REJECTed, RELEASEd until it dies at the delivery limit
 * (2), or ACCEPTed. Two source partitions share one queue partition, so the letters of two
 * share-partitions interleave there.
 *
 * <p>At the end, once the group's start offsets have reached the end of both partitions, the whole
 * queue is read and checked: no record has two letters; every record whose REJECT, or whose RELEASE
 * at the limit, was confirmed to its client has exactly one; no record whose ACCEPT was confirmed
 * has one; every record the consumers never ACCEPT has exactly one; a record to be ACCEPTed has one
 * only if it died at the limit because crashes used up its deliveries. Each letter names its record
 * and copies its key and value.
 *
 * <p>{@code -Dpier.dlqkill.cycles=N} (4 by default, the {@code soak} profile sets 60; on the gateway
 * {@code -Dpier.dlqkill.gateway.cycles=N}, 2 by default, 60 in the soak),
 * {@code -Dpier.dlqkill.records=N} and {@code -Dpier.dlqkill.seed=N} control the run; the seed is
 * printed.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class DeadLetterKillNineIT {
    private static final String TOPIC = "dlq-kill";
    private static final String QUEUE = "dlq.dlq-kill";
    private static final String GROUP = "dlq-kill-group";
    private static final int PARTITIONS = 2;
    private static final short LIMIT = 2;
    private static final int POLL_RECORDS = 20;

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    /** What the consumers do with a record, by its value. */
    enum Fate {
        REJECT,
        /** RELEASE at every delivery: dies at the delivery limit. */
        POISON,
        ACCEPT
    }

    /** A source record. */
    record Id(int partition, long offset) implements Comparable<Id> {
        @Override
        public int compareTo(Id o) {
            return partition != o.partition ? Integer.compare(partition, o.partition) : Long.compare(offset, o.offset);
        }

        @Override
        public String toString() {
            return partition + ":" + offset;
        }
    }

    /** One letter found in the queue. */
    record Letter(long queueOffset, String deliveryCount, String message, String key, String value, String group) {}

    private long seed;
    private final Map<Id, String> values = new ConcurrentHashMap<>();
    private final Set<Id> acceptConfirmed = ConcurrentHashMap.newKeySet();
    private final Set<Id> rejectConfirmed = ConcurrentHashMap.newKeySet();
    private final Set<Id> limitReleaseConfirmed = ConcurrentHashMap.newKeySet();
    /** What happened to each record, for the failure messages: run, consumer, count, verdict, outcome. */
    private final Map<Id, List<String>> history = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong confirmedVerdicts = new AtomicLong();
    private volatile int run;
    private volatile boolean running = true;
    /** The broker, or the gateway nodes: one of them is killed per cycle. */
    private final List<ChildBroker> nodes = new ArrayList<>();

    @Test
    void shouldWriteExactlyOneDeadLetterPerDeadRecordAcrossKillNine() throws Exception {
        // small state segments and frequent snapshots, so kills also land on state-log rolls
        nodes.add(new ChildBroker(dataDir, scratch, "pier.share.state.segment.bytes=65536",
                "share.coordinator.cold.partition.snapshot.interval.ms=500",
                "share.coordinator.snapshot.update.records.per.snapshot=50"));
        killCycles(Integer.getInteger("pier.dlqkill.cycles", 4));
    }

    /**
     * The same on two gateway nodes over one upstream Kafka, which holds the queue, the share state
     * and the records: each cycle SIGKILLs one of the nodes, whose share-partitions the other takes
     * over (looking up the letters of what it finds ARCHIVING in the upstream's queue) until the
     * killed node, restarted, takes its share back.
     */
    @Test
    void shouldWriteExactlyOneDeadLetterPerDeadRecordAcrossGatewayNodeKills() throws Exception {
        try (UpstreamKafka upstream = UpstreamKafka.builder().start()) {
            for (int id = 1; id <= 2; id++) {
                nodes.add(new ChildBroker(Files.createDirectories(dataDir.resolve("node-" + id)), scratch,
                        "node.id=" + id, "pier.gateway.upstream.bootstrap.servers=" + upstream.bootstrapServers(),
                        "pier.gateway.session.timeout.ms=6000"));
            }
            killCycles(Integer.getInteger("pier.dlqkill.gateway.cycles", 2));
        }
    }

    private void killCycles(int cycles) throws Exception {
        int records = Math.max(Integer.getInteger("pier.dlqkill.records", 2000), 200 * cycles);
        seed = Long.getLong("pier.dlqkill.seed", System.nanoTime());
        System.out.printf("DeadLetterKillNineIT seed %d, %d cycles, %d records, %d nodes%n", seed, cycles, records,
                nodes.size());
        Random random = new Random(seed);
        String bootstrap = String.join(",", nodes.stream().map(ChildBroker::bootstrapServers).toList());
        List<Thread> consumers = new ArrayList<>();
        long[] ends;
        try {
            startAll(0);
            setUp(bootstrap);
            ends = produce(bootstrap, records);
            // Paced so that the work spans the cycles (about 1.5 s of consuming each), and kills
            // land while letters are being written, not after everything is done.
            long pauseMs = POLL_RECORDS * 2L * cycles * 1500 / records;
            for (int c = 0; c < 2; c++) {
                int consumer = c;
                Thread t = new Thread(() -> consumeLoop(bootstrap, consumer, pauseMs), "dlq-kill-consumer-" + c);
                t.start();
                consumers.add(t);
            }

            for (int cycle = 1; cycle <= cycles; cycle++) {
                if (random.nextInt(4) == 0) {
                    // soon after the start, while letters of records loaded ARCHIVING are looked up
                    Thread.sleep(random.nextInt(1500));
                } else {
                    long target = confirmedVerdicts.get() + 10 + random.nextInt(2 * records / (cycles + 1));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (confirmedVerdicts.get() < target && System.nanoTime() < deadline) {
                        assertAllAlive();
                        Thread.sleep(5);
                    }
                    Thread.sleep(random.nextInt(50));
                }
                assertAllAlive();
                ChildBroker victim = nodes.get(random.nextInt(nodes.size()));
                assertThat(victim.kill()).isTrue();
                run = cycle;
                victim.start(cycle * 10 + nodes.indexOf(victim));
                assertThat(violations).as("violations after cycle %d (seed %d)", cycle, seed).isEmpty();
            }
            awaitStartOffsetsAtEnd(bootstrap, ends);
        } finally {
            running = false;
            for (Thread t : consumers) {
                t.join(30_000);
            }
        }
        Map<Id, List<Letter>> letters;
        try {
            letters = readQueue(bootstrap);
        } finally {
            for (ChildBroker node : nodes) {
                node.close();
            }
        }
        check(letters, cycles, records);
    }

    /** Starts every node at once (gateway nodes wait for each other's first split); {@code run} names the logs. */
    private void startAll(int run) throws Exception {
        List<Thread> starting = new ArrayList<>();
        List<Throwable> failed = new CopyOnWriteArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            ChildBroker node = nodes.get(i);
            int log = run * 10 + i;
            Thread t = new Thread(() -> {
                try {
                    node.start(log);
                } catch (IOException | RuntimeException e) {
                    failed.add(e);
                }
            }, "dlq-kill-start-" + i);
            t.start();
            starting.add(t);
        }
        for (Thread t : starting) {
            t.join(60_000);
        }
        assertThat(failed).as("nodes that failed to start").isEmpty();
    }

    private void assertAllAlive() throws IOException {
        for (ChildBroker node : nodes) {
            node.assertAlive();
        }
    }

    private void setUp(String bootstrap) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1),
                    new NewTopic(QUEUE, 1, (short) 1).configs(Map.of("errors.deadletterqueue.group.enable", "true"))))
                    .all().get();
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, GROUP);
            List<AlterConfigOp> ops = new ArrayList<>();
            Map<String, String> configs = new LinkedHashMap<>();
            configs.put("share.auto.offset.reset", "earliest");
            configs.put("share.delivery.count.limit", String.valueOf(LIMIT));
            configs.put("share.record.lock.duration.ms", "15000");
            configs.put("errors.deadletterqueue.topic.name", QUEUE);
            configs.put("errors.deadletterqueue.copy.record.enable", "true");
            configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(Map.of(group, ops)).all().get();
        }
    }

    /** Produces every record before the first kill; returns each partition's end offset. */
    private long[] produce(String bootstrap, int records) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        long[] ends = new long[PARTITIONS];
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            for (int seq = 0; seq < records; seq++) {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, seq % PARTITIONS, "k" + seq, "v" + seq)));
            }
            for (int seq = 0; seq < records; seq++) {
                RecordMetadata md = sent.get(seq).get();
                values.put(new Id(md.partition(), md.offset()), "v" + seq);
                ends[md.partition()] = Math.max(ends[md.partition()], md.offset() + 1);
            }
        }
        return ends;
    }

    private Fate fate(String value) {
        int roll = new SplittableRandom(seed * 31 + Long.parseLong(value.substring(1))).nextInt(100);
        return roll < 15 ? Fate.REJECT : roll < 25 ? Fate.POISON : Fate.ACCEPT;
    }

    private void consumeLoop(String bootstrap, int consumerNo, long pauseMs) {
        Random random = new Random(seed + 1 + consumerNo);
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", GROUP);
        p.put("client.id", "dlq-kill-" + consumerNo);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        p.put("max.poll.records", String.valueOf(POLL_RECORDS));
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(Set.of(TOPIC));
            while (running) {
                record Sent(ConsumerRecord<String, String> r, AcknowledgeType type, String event) {}
                List<Sent> sent = new ArrayList<>();
                int atRun = run;
                try {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        AcknowledgeType type = switch (fate(r.value())) {
                            case REJECT -> AcknowledgeType.REJECT;
                            case POISON -> AcknowledgeType.RELEASE;
                            case ACCEPT -> AcknowledgeType.ACCEPT;
                        };
                        String event = check(r, consumerNo, atRun, type);
                        consumer.acknowledge(r, type);
                        sent.add(new Sent(r, type, event));
                    }
                    if (sent.isEmpty()) {
                        continue;
                    }
                    if (pauseMs > 0) {
                        Thread.sleep(pauseMs / 2 + random.nextLong(pauseMs + 1));
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(5));
                    Map<Integer, Optional<KafkaException>> byPartition = new HashMap<>();
                    result.forEach((tip, outcome) -> {
                        if (tip.topic().equals(TOPIC)) {
                            byPartition.put(tip.partition(), outcome);
                        }
                    });
                    for (Sent s : sent) {
                        Id id = new Id(s.r().partition(), s.r().offset());
                        Optional<KafkaException> outcome = byPartition.get(id.partition());
                        boolean confirmed = outcome != null && outcome.isEmpty();
                        note(id, s.event() + (confirmed ? " confirmed"
                                : " not confirmed (" + (outcome == null ? "no result" : outcome.get()) + ")"));
                        if (!confirmed) {
                            continue;
                        }
                        confirmedVerdicts.incrementAndGet();
                        if (s.type() == AcknowledgeType.ACCEPT) {
                            acceptConfirmed.add(id);
                        } else if (s.type() == AcknowledgeType.REJECT) {
                            rejectConfirmed.add(id);
                        } else if (s.r().deliveryCount().orElse((short) 0) >= LIMIT) {
                            limitReleaseConfirmed.add(id);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (KafkaException | IllegalStateException e) {
                    // the broker went away mid-request: these verdicts are not confirmed
                    for (Sent s : sent) {
                        note(new Id(s.r().partition(), s.r().offset()), s.event() + " unknown (" + e + ")");
                    }
                }
            }
        }
    }

    /** Checks a delivery against what was confirmed before; returns its description. */
    private String check(ConsumerRecord<String, String> r, int consumerNo, int atRun, AcknowledgeType type) {
        Id id = new Id(r.partition(), r.offset());
        short count = r.deliveryCount().orElse((short) -1);
        deliveries.incrementAndGet();
        if (acceptConfirmed.contains(id) || rejectConfirmed.contains(id) || limitReleaseConfirmed.contains(id)) {
            violations.add(id + " delivered (count " + count + ") after a confirmed final verdict: " + history.get(id));
        }
        if (count > LIMIT) {
            violations.add(id + " delivered with count " + count + " above the limit " + LIMIT);
        }
        if (!r.value().equals(values.get(id))) {
            violations.add(id + " delivered with value " + r.value() + ", produced as " + values.get(id));
        }
        return "run " + atRun + " consumer " + consumerNo + " count " + count + " " + type;
    }

    private void note(Id id, String event) {
        history.computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>())).add(event);
    }

    private void awaitStartOffsetsAtEnd(String bootstrap, long[] ends) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            Map<Integer, Long> last = new TreeMap<>();
            try {
                await("start offsets at the end of both partitions").atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(200)).until(() -> {
                            assertAllAlive();
                            Map<TopicPartition, SharePartitionOffsetInfo> info = admin
                                    .listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                                    .partitionsToOffsetInfo(GROUP).get(10, TimeUnit.SECONDS);
                            boolean done = true;
                            for (int p = 0; p < PARTITIONS; p++) {
                                SharePartitionOffsetInfo i = info.get(new TopicPartition(TOPIC, p));
                                long start = i == null ? -1 : i.startOffset();
                                last.put(p, start);
                                done &= start >= ends[p];
                            }
                            return done;
                        });
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                throw new AssertionError("seed " + seed + ": start offsets " + last + " never reached the ends "
                        + java.util.Arrays.toString(ends) + "; violations " + violations, e);
            }
        }
    }

    /** Every letter in the queue, by the record it names. */
    private Map<Id, List<Letter>> readQueue(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("max.poll.records", "2000");
        Map<Id, List<Letter>> out = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(QUEUE, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (consumer.position(tp) < end) {
                assertThat(System.nanoTime()).as("reading %s up to %d (seed %d)", QUEUE, end, seed).isLessThan(deadline);
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    Map<String, String> h = new HashMap<>();
                    for (Header header : r.headers()) {
                        h.put(header.key(), header.value() == null ? null
                                : new String(header.value(), StandardCharsets.UTF_8));
                    }
                    if (!TOPIC.equals(h.get("__dlq.errors.topic"))) {
                        violations.add("queue offset " + r.offset() + " names topic " + h.get("__dlq.errors.topic"));
                        continue;
                    }
                    Id id = new Id(Integer.parseInt(h.get("__dlq.errors.partition")),
                            Long.parseLong(h.get("__dlq.errors.offset")));
                    out.computeIfAbsent(id, k -> new ArrayList<>()).add(new Letter(r.offset(),
                            h.get("__dlq.errors.delivery.count"), h.get("__dlq.errors.message"), text(r.key()),
                            text(r.value()), h.get("__dlq.errors.group")));
                }
            }
        }
        return out;
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private String describe(Id id, Map<Id, List<Letter>> letters) {
        String value = values.get(id);
        return id + " (" + value + ", " + (value == null ? "?" : fate(value)) + ") letters "
                + letters.getOrDefault(id, List.of()) + " history " + history.getOrDefault(id, List.of());
    }

    private void check(Map<Id, List<Letter>> letters, int cycles, int records) throws IOException {
        List<String> problems = new ArrayList<>(violations);
        int lettersTotal = 0;
        int died = 0;
        int acceptLettered = 0;
        int unconfirmedAccepts = 0;
        for (Map.Entry<Id, List<Letter>> e : letters.entrySet()) {
            Id id = e.getKey();
            lettersTotal += e.getValue().size();
            String value = values.get(id);
            if (value == null) {
                problems.add("letter of a record never produced: " + describe(id, letters));
                continue;
            }
            // (a) the key check: one letter per dead record
            if (e.getValue().size() > 1) {
                problems.add("duplicate letters: " + describe(id, letters));
            }
            for (Letter l : e.getValue()) {
                if (!GROUP.equals(l.group()) || !value.equals(l.value()) || !("k" + value.substring(1)).equals(l.key())
                        || l.deliveryCount() == null || Integer.parseInt(l.deliveryCount()) > LIMIT
                        || Integer.parseInt(l.deliveryCount()) < 1) {
                    problems.add("letter does not match its record: " + describe(id, letters));
                }
            }
            // (c) a confirmed ACCEPT is final
            if (acceptConfirmed.contains(id)) {
                problems.add("letter of a record whose ACCEPT was confirmed: " + describe(id, letters));
            }
            if (fate(value) == Fate.ACCEPT) {
                acceptLettered++;
                // only crashes can have used up its deliveries
                if (!e.getValue().stream().allMatch(l -> String.valueOf(LIMIT).equals(l.deliveryCount()))) {
                    problems.add("letter of a record always ACCEPTed, below the limit: " + describe(id, letters));
                }
            }
        }
        for (Id id : values.keySet().stream().sorted().toList()) {
            int n = letters.getOrDefault(id, List.of()).size();
            Fate fate = fate(values.get(id));
            // (b) a confirmed death has exactly one letter
            if ((rejectConfirmed.contains(id) || limitReleaseConfirmed.contains(id)) && n != 1) {
                problems.add((rejectConfirmed.contains(id) ? "confirmed REJECT" : "confirmed RELEASE at the limit")
                        + " with " + n + " letters: " + describe(id, letters));
            }
            // (d) every record is accepted or dead; what is never accepted dies, with one letter
            if (fate != Fate.ACCEPT && n != 1) {
                problems.add(fate + " record (never ACCEPTed) with " + n + " letters: " + describe(id, letters));
            }
            if (n > 0) {
                died++;
            } else if (fate == Fate.ACCEPT && !acceptConfirmed.contains(id)) {
                unconfirmedAccepts++;
            }
        }
        int recoveredLookups = 0;
        try (var files = Files.list(scratch)) {
            for (Path f : files.toList()) {
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (line.contains("are in the queue already")) {
                        recoveredLookups++;
                    }
                }
            }
        }
        System.out.printf("DeadLetterKillNineIT seed %d: %d cycles, %d records, %d deliveries; confirmed %d ACCEPT,"
                        + " %d REJECT, %d RELEASE at the limit; %d letters for %d records (%d of records always"
                        + " ACCEPTed, dead by crashes); %d ACCEPTs never confirmed, no letter; %d times letters found"
                        + " already written after a restart; %d problems%n",
                seed, cycles, records, deliveries.get(), acceptConfirmed.size(), rejectConfirmed.size(),
                limitReleaseConfirmed.size(), lettersTotal, died, acceptLettered, unconfirmedAccepts,
                recoveredLookups, problems.size());
        assertThat(problems.subList(0, Math.min(50, problems.size())))
                .as("seed %d: dead-letter violations (first 50 of %d)", seed, problems.size()).isEmpty();
        assertThat(lettersTotal).as("seed %d: letters in the queue", seed).isEqualTo(died);
    }
}
