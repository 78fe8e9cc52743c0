package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Mixed load through crash after crash, and the oracle over it (issue "Reliability campaign",
 * items 2 and 3). The load:
 * <ul>
 *   <li>an idempotent producer;
 *   <li>two share consumers of one group that ACCEPT, RELEASE and REJECT at random and sometimes
 *       let their locks expire;
 *   <li>a consumer-group member committing after every poll on the same records;
 *   <li>a transactional producer committing and aborting on a topic of its own.
 * </ul>
 * The share group writes its dead records to a dead-letter queue ({@link DeadLetterOracle}: exactly
 * one letter per dead record, none for an accepted one).
 * Each cycle waits for fresh progress in all four, then crashes the {@link SoakBroker} at a random
 * moment and starts it again on the same data, or hits the broker, the network or a share consumer
 * with whatever other fault the broker brings ({@link SoakBroker#fault}).
 *
 * <p>After every restart (or other fault): no invariant broken so far, and every confirmed commit's
 * offset still committed. At the end:
 * <ul>
 *   <li>every acknowledged record present once, with its value (I1, idempotence);
 *   <li>every acknowledged record delivered to the share group (I1), or, where the broker's
 *       answers can be watched ({@link SoakBroker#seenHandedOut}), seen handed out at the delivery
 *       limit in answers that never reached the load, and terminal;
 *   <li>no record redelivered after a confirmed ACCEPT or REJECT (I5);
 *   <li>delivery counts within the limit (I6) and never repeated (I7);
 *   <li>every transaction whole or absent under read_committed, committed ones present and
 *       aborted ones not.
 * </ul>
 */
final class MixedLoadSoak {
    /** Broker settings the load expects; a {@link SoakBroker} starts with these. */
    static final List<String> BROKER_SETTINGS = List.of(
            "group.initial.rebalance.delay.ms=0",
            "group.share.min.record.lock.duration.ms=1000",
            // small state segments, so crashes also land on state-log rolls and compactions
            "pier.share.state.segment.bytes=65536", "pier.offsets.segment.bytes=65536",
            "share.coordinator.snapshot.update.records.per.snapshot=50");

    private static final String TOPIC = "soak";
    private static final int PARTITIONS = 2;
    private static final String TXN_TOPIC = "soak-txn";
    private static final String TRANSACTIONAL_ID = "soak-txn-producer";
    private static final String SHARE_GROUP = "soak-share";
    /** The share group's dead-letter queue (KIP-1191), one partition. */
    private static final String DEAD_LETTER_TOPIC = "dlq.soak";
    private static final String GROUP = "soak-group";
    /** The share group's delivery limit; a record handed out this many times is archived. */
    static final int DELIVERY_LIMIT = 5;
    /** The share group's record lock; faults that must outlast it read it. */
    static final long LOCK_MS = 1500;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(60);

    private final Violations violations = new Violations();

    /** Runs {@code cycles} crash cycles against {@code broker} (not yet started) and checks the end state. */
    void run(String name, SoakBroker broker, int cycles, long seed) throws Exception {
        run(name, broker, cycles, null, seed);
    }

    /**
     * Runs {@code cycles} fault cycles against {@code broker} (not yet started), or fewer if
     * {@code budget} (null: none) runs out first, and checks the end state. Each cycle's fault is
     * {@link SoakBroker#fault}: a crash and a restart unless the broker has other faults.
     */
    void run(String name, SoakBroker broker, int cycles, Duration budget, long seed) throws Exception {
        System.out.printf("%s seed %d, %d cycles%s%n", name, seed, cycles,
                budget == null ? "" : " or " + budget.toMinutes() + " minutes, whichever ends first");
        long deadline = budget == null ? Long.MAX_VALUE : System.nanoTime() + budget.toNanos();
        Random random = new Random(seed);
        String bootstrap = broker.bootstrapServers();
        DeadLetterOracle deadLetters = new DeadLetterOracle(TOPIC, DEAD_LETTER_TOPIC, DELIVERY_LIMIT);
        ShareConsumeLoad.Oracle shareOracle = new ShareConsumeLoad.Oracle(DELIVERY_LIMIT, violations, deadLetters);
        IdempotentProduceLoad produce = new IdempotentProduceLoad(bootstrap, TOPIC, PARTITIONS);
        // Changed only on this thread, by the faults that replace a consumer.
        List<ShareConsumeLoad> shares = new ArrayList<>(List.of(
                new ShareConsumeLoad(bootstrap, "soak-share-0", SHARE_GROUP, TOPIC, LOCK_MS, shareOracle, seed + 1),
                new ShareConsumeLoad(bootstrap, "soak-share-1", SHARE_GROUP, TOPIC, LOCK_MS, shareOracle, seed + 2)));
        GroupCommitLoad group = new GroupCommitLoad(bootstrap, GROUP, TOPIC);
        TransactionLoad txns = new TransactionLoad(bootstrap, TXN_TOPIC, TRANSACTIONAL_ID, seed + 3);
        List<Thread> threads = new ArrayList<>();
        // Transactions the oracle faulted, with their records' places: shown from the log once the broker is closed.
        Map<Integer, List<Place>> suspectPlaces = new TreeMap<>();
        SoakBroker.Load load = new SoakBroker.Load() {
            @Override
            public void brokerGoingDown() {
                shareOracle.crashing();
                txns.faultComing();
            }

            @Override
            public List<String> shareConsumers() {
                return shares.stream().map(ShareConsumeLoad::clientId).toList();
            }

            @Override
            public void replaceShareConsumer(String clientId) throws Exception {
                ShareConsumeLoad old = shares.stream().filter(s -> s.clientId().equals(clientId)).findFirst()
                        .orElseThrow(() -> new IllegalArgumentException("no share consumer " + clientId));
                Thread oldThread = threads.stream().filter(t -> t.getName().equals(clientId)).findFirst().orElseThrow();
                old.abort();
                // The new one with a number of its own, for its client id and its dice.
                int n = threads.size();
                ShareConsumeLoad replacement = new ShareConsumeLoad(bootstrap, "soak-share-" + n, SHARE_GROUP,
                        TOPIC, LOCK_MS, shareOracle, seed + 100 + n);
                shares.set(shares.indexOf(old), replacement);
                threads.add(start(replacement, replacement.clientId()));
                // Its poll or commit fails fast once its connections are cut; a commit gives up after 5 s.
                oldThread.join(20_000);
                assertThat(oldThread.isAlive()).as("aborted share consumer %s ended", clientId).isFalse();
            }
        };
        try {
            broker.start(0);
            try (Admin admin = admin(bootstrap)) {
                setUp(admin);
            }
            threads.add(start(produce, "soak-producer"));
            for (ShareConsumeLoad share : shares) {
                threads.add(start(share, share.clientId()));
            }
            threads.add(start(group, "soak-group"));
            threads.add(start(txns, "soak-txn"));

            int cycle = 1;
            for (; cycle <= cycles && System.nanoTime() < deadline; cycle++) {
                awaitProgress(broker, cycle, "acknowledged produce", produce::ackedCount, 50 + random.nextInt(300));
                awaitProgress(broker, cycle, "confirmed share acknowledgements", shareOracle::confirmedFinal,
                        10 + random.nextInt(100));
                awaitProgress(broker, cycle, "confirmed group commits", group::commits, 1 + random.nextInt(5));
                awaitProgress(broker, cycle, "committed transactions", txns::committed, 1 + random.nextInt(3));
                Thread.sleep(random.nextInt(300)); // the crash lands anywhere in the load's cycle
                broker.fault(cycle, random, load);
                try (Admin admin = admin(bootstrap)) {
                    group.check(admin, violations);
                }
                assertThat(violations.list()).as("violations after cycle %d", cycle).isEmpty();
            }
            int cyclesRun = cycle - 1;

            produce.stop();
            threads.get(0).join(60_000);
            Map<TopicPartition, Map<Long, String>> acked = produce.acked();
            // I1 as the load sees it: every acknowledged record reaches a share consumer, unless
            // every hand-out of it was lost on the way (see lostOnTheWay).
            List<Place> lostOnTheWay = new ArrayList<>();
            try (Admin admin = admin(bootstrap)) {
                await("every acknowledged record delivered to the share group").atMost(PROGRESS_TIMEOUT)
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> unexplained(undelivered(acked, shareOracle), broker, admin, lostOnTheWay).isEmpty());
            } catch (ConditionTimeoutException e) {
                List<Place> missing = undelivered(acked, shareOracle);
                // In the failure's message, not only the output: a CI run shows a test's message and no more.
                String what = name + " seed " + seed + ": acknowledged records never delivered to the share group: "
                        + ranges(missing) + "; of them seen handed out at the delivery limit: "
                        + ranges(missing.stream().filter(r -> seenAtLimit(broker, r)).toList())
                        + "; the share group's start offsets: " + answer(() -> shareStartOffsets(bootstrap))
                        + "; load threads: " + threads.stream()
                                .map(t -> t.getName() + (t.isAlive() ? "" : " (ended)")).toList();
                System.out.println("MixedLoadSoak: " + what);
                printStall("share deliveries after the last fault", broker.bootstrapServers());
                throw new AssertionError(what, e);
            }
            if (!lostOnTheWay.isEmpty()) {
                System.out.printf("%s: acknowledged records that never reached the load: every hand-out lost on the"
                        + " way, the last at the delivery limit (%d), then archived: %s%n", name, DELIVERY_LIMIT,
                        ranges(lostOnTheWay));
            }
            group.stop();
            txns.stop();
            shares.forEach(ShareConsumeLoad::stop);
            for (Thread t : threads) {
                t.join(60_000);
                assertThat(t.isAlive()).as("%s stopped", t.getName()).isFalse();
            }

            String redeliveries = shareOracle.checkRedeliveries();
            String letters = deadLetters.check(bootstrap, PROGRESS_TIMEOUT, violations);
            checkLog(bootstrap, acked);
            fence(bootstrap);
            txns.check(readCommitted(bootstrap), violations);
            if (!txns.suspects().isEmpty()) {
                suspectPlaces.putAll(placesOf(bootstrap, txns.suspects()));
                printTransactionView(bootstrap, txns, suspectPlaces);
            }
            try (Admin admin = admin(bootstrap)) {
                group.check(admin, violations);
            }
            System.out.printf("%s: %d cycles, %d records acknowledged, %d share deliveries, %d confirmed"
                    + " ACCEPT/REJECT, %d late acknowledgements refused, %d group commits, %d transactions"
                    + " committed, %d records lost on the way to the share group%n", name, cyclesRun,
                    produce.ackedCount(), shareOracle.deliveries(), shareOracle.confirmedFinal(),
                    shareOracle.lateAcksRefused(), group.commits(), txns.committed(), lostOnTheWay.size());
            System.out.printf("%s: %s%n", name, redeliveries);
            System.out.printf("%s: %s%n", name, letters);
            assertThat(violations.list()).isEmpty();
        } finally {
            produce.stop();
            group.stop();
            txns.stop();
            shares.forEach(ShareConsumeLoad::stop);
            for (Thread t : threads) {
                t.join(60_000);
            }
            broker.close();
            if (!suspectPlaces.isEmpty()) {
                printTransactionalLog(broker.dataDir(), suspectPlaces);
            }
        }
    }

    /** Where read_uncommitted finds the records of transactions {@code numbers}, by transaction. */
    private static Map<Integer, List<Place>> placesOf(String bootstrap, List<Integer> numbers) {
        Map<Integer, List<Place>> places = new TreeMap<>();
        numbers.forEach(n -> places.put(n, new ArrayList<>()));
        readToEnd(bootstrap, List.of(new TopicPartition(TXN_TOPIC, 0), new TopicPartition(TXN_TOPIC, 1)),
                "read_uncommitted", r -> {
                    List<Place> of = places.get(Integer.parseInt(r.key().substring(1)));
                    if (of != null) {
                        of.add(new Place(new TopicPartition(r.topic(), r.partition()), r.offset()));
                    }
                });
        return places;
    }

    /**
     * A transaction the oracle faults: what its client was told, where its records are, and what
     * the broker says of the transactional id, the partitions' producers and their stable ends.
     */
    private static void printTransactionView(String bootstrap, TransactionLoad txns,
            Map<Integer, List<Place>> places) {
        places.forEach((n, at) -> System.out.println("MixedLoadSoak: " + txns.told(n) + "; its records, read"
                + " uncommitted: " + ranges(at)));
        List<TopicPartition> tps = List.of(new TopicPartition(TXN_TOPIC, 0), new TopicPartition(TXN_TOPIC, 1));
        try (Admin admin = admin(bootstrap)) {
            ask("transaction " + TRANSACTIONAL_ID, () -> admin.describeTransactions(List.of(TRANSACTIONAL_ID)).all()
                    .get(10, TimeUnit.SECONDS));
            ask("producers of " + TXN_TOPIC, () -> admin.describeProducers(tps).all().get(10, TimeUnit.SECONDS));
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            tps.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            for (IsolationLevel isolation : IsolationLevel.values()) {
                ask(TXN_TOPIC + " end offsets, " + isolation, () -> admin.listOffsets(latest,
                        new ListOffsetsOptions(isolation)).all().get(10, TimeUnit.SECONDS));
            }
        }
    }

    /**
     * The batch headers and end markers around each suspect transaction's records, from the
     * files of the closed broker (where the test can reach them): which markers the log holds for
     * it, of which type and epoch, and what lies between.
     */
    private static void printTransactionalLog(Path dataDir, Map<Integer, List<Place>> places) {
        if (dataDir == null) {
            System.out.println("MixedLoadSoak: the broker's data folder is out of reach: no batch headers to show");
            return;
        }
        places.forEach((n, at) -> {
            Map<TopicPartition, long[]> span = new HashMap<>();
            for (Place p : at) {
                span.merge(p.tp(), new long[] {p.offset(), p.offset()},
                        (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
            }
            span.forEach((tp, fromTo) -> {
                System.out.println("MixedLoadSoak: transaction " + n + " on " + tp + " at " + fromTo[0] + ".."
                        + fromTo[1] + "; the log's batches around it:");
                TransactionalLogDump.around(dataDir, tp, fromTo[0], fromTo[1])
                        .forEach(line -> System.out.println("    " + line));
            });
        });
    }

    private static void setUp(Admin admin) throws Exception {
        admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1), new NewTopic(TXN_TOPIC, 2, (short) 1),
                new NewTopic(DEAD_LETTER_TOPIC, 1, (short) 1).configs(Map.of("errors.deadletterqueue.group.enable",
                        "true")))).all().get();
        ConfigResource share = new ConfigResource(ConfigResource.Type.GROUP, SHARE_GROUP);
        admin.incrementalAlterConfigs(Map.of(share, List.of(
                set("share.auto.offset.reset", "earliest"),
                set("errors.deadletterqueue.topic.name", DEAD_LETTER_TOPIC),
                set("errors.deadletterqueue.copy.record.enable", "true"),
                set("share.delivery.count.limit", String.valueOf(DELIVERY_LIMIT)),
                set("share.record.lock.duration.ms", String.valueOf(LOCK_MS))))).all().get();
    }

    private static AlterConfigOp set(String name, String value) {
        return new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET);
    }

    private static Thread start(Runnable load, String name) {
        Thread t = new Thread(load, name);
        t.start();
        return t;
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of("bootstrap.servers", bootstrap, "request.timeout.ms", "10000",
                "default.api.timeout.ms", "30000"));
    }

    /**
     * What the stalled broker says of the load's group, transaction and partitions, through Admin:
     * with every broker thread idle in a stall's thread dump, the state it is waiting in is what
     * is left to see. Each question gets 10 s; a failure to answer is printed too.
     */
    private static void printBrokerView(String bootstrap) {
        try (Admin admin = admin(bootstrap)) {
            ask("group " + GROUP, () -> admin.describeConsumerGroups(List.of(GROUP)).all()
                    .get(10, TimeUnit.SECONDS));
            ask("transaction " + TRANSACTIONAL_ID, () -> admin.describeTransactions(List.of(TRANSACTIONAL_ID)).all()
                    .get(10, TimeUnit.SECONDS));
            ask("committed offsets of " + GROUP, () -> admin.listConsumerGroupOffsets(GROUP)
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS));
            ask("share group " + SHARE_GROUP, () -> admin.describeShareGroups(List.of(SHARE_GROUP)).all()
                    .get(10, TimeUnit.SECONDS));
            ask("share start offsets of " + SHARE_GROUP, () -> shareStartOffsets(bootstrap));
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (String topic : List.of(TOPIC, TXN_TOPIC)) {
                for (int p = 0; p < PARTITIONS; p++) {
                    latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
                }
            }
            for (IsolationLevel isolation : IsolationLevel.values()) {
                ask("end offsets, " + isolation, () -> admin.listOffsets(latest, new ListOffsetsOptions(isolation))
                        .all().get(10, TimeUnit.SECONDS));
            }
        }
    }

    private static void ask(String what, Callable<Object> question) {
        System.out.println("MixedLoadSoak: " + what + ": " + answer(question));
    }

    private static String answer(Callable<Object> question) {
        try {
            return String.valueOf(question.call());
        } catch (Exception e) {
            return "no answer: " + e;
        }
    }

    private static Object shareStartOffsets(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            return admin.listShareGroupOffsets(Map.of(SHARE_GROUP, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(SHARE_GROUP).get(10, TimeUnit.SECONDS);
        }
    }

    /** Waits until {@code figure} has grown by {@code by}, failing with the broker's output if it died. */
    private static void awaitProgress(SoakBroker broker, int cycle, String what, LongSupplier figure, long by) {
        long target = figure.getAsLong() + by;
        try {
            await(what + " before fault " + cycle).atMost(PROGRESS_TIMEOUT).pollInterval(Duration.ofMillis(10))
                    .until(() -> {
                        broker.assertAlive();
                        return figure.getAsLong() >= target;
                    });
        } catch (ConditionTimeoutException e) {
            printStall(what + " before fault " + cycle, broker.bootstrapServers());
            throw e;
        }
    }

    /**
     * A load that stalls is a broker that stopped answering (or a client that gave up): what every
     * thread of this JVM (an in-process broker's included) was doing says which, and what the broker
     * says of the load's groups, transaction and partitions.
     */
    private static void printStall(String what, String bootstrap) {
        System.out.println("MixedLoadSoak: no progress of " + what + "; the threads of this JVM:");
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            System.out.println("\"" + thread.getName() + "\" " + thread.getState());
            for (StackTraceElement frame : stack) {
                System.out.println("    at " + frame);
            }
        });
        printBrokerView(bootstrap);
    }

    /** One record's place. */
    private record Place(TopicPartition tp, long offset) {}

    /** Places as runs of consecutive offsets per partition. */
    private static String ranges(List<Place> places) {
        Map<String, List<Long>> offsets = new TreeMap<>();
        for (Place p : places) {
            offsets.computeIfAbsent(p.tp().toString(), k -> new ArrayList<>()).add(p.offset());
        }
        StringBuilder out = new StringBuilder(places.size() + " records");
        offsets.forEach((tp, list) -> {
            Collections.sort(list);
            out.append(' ').append(tp).append(" [");
            for (int i = 0; i < list.size(); ) {
                int j = i;
                while (j + 1 < list.size() && list.get(j + 1) == list.get(j) + 1) {
                    j++;
                }
                out.append(i == 0 ? "" : ", ").append(list.get(i)).append(j == i ? "" : "-" + list.get(j));
                i = j + 1;
            }
            out.append(']');
        });
        return out.toString();
    }

    private static List<Place> undelivered(Map<TopicPartition, Map<Long, String>> acked,
            ShareConsumeLoad.Oracle oracle) {
        List<Place> missing = new ArrayList<>();
        acked.forEach((tp, records) -> records.keySet().forEach(offset -> {
            if (!oracle.wasDelivered(tp, offset)) {
                missing.add(new Place(tp, offset));
            }
        }));
        return missing;
    }

    /**
     * The records of {@code missing} (never delivered to the load) that nothing explains; the
     * explained ones go into {@code lostOnTheWay}. A record is explained when the broker was seen
     * on the wire handing it out at the delivery limit and it is terminal now (below the share
     * group's start offset): the load never saw it, so every one of its hand-outs was lost before
     * it reached the application (in the network, or in a client whose connection reset), and a
     * record released at the limit is archived. Kafka 4.4 counts such hand-outs too
     * (KAFKA-19972: a share session that ends releases its records with their delivery count as
     * it stands), so the record is terminal without ever reaching an application. Nothing else
     * explains a missing record: a broker that archived one it never handed out at the limit, or
     * left one unfinished, fails here.
     */
    private static List<Place> unexplained(List<Place> missing, SoakBroker broker, Admin admin,
            List<Place> lostOnTheWay) throws Exception {
        lostOnTheWay.clear();
        List<Place> left = new ArrayList<>();
        Map<TopicPartition, SharePartitionOffsetInfo> start = null;
        for (Place r : missing) {
            if (seenAtLimit(broker, r)) {
                if (start == null) {
                    start = admin.listShareGroupOffsets(Map.of(SHARE_GROUP, new ListShareGroupOffsetsSpec()))
                            .partitionsToOffsetInfo(SHARE_GROUP).get(10, TimeUnit.SECONDS);
                }
                SharePartitionOffsetInfo info = start.get(r.tp());
                if (info != null && info.startOffset() > r.offset()) {
                    lostOnTheWay.add(r);
                    continue;
                }
            }
            left.add(r);
        }
        return left;
    }

    private static boolean seenAtLimit(SoakBroker broker, Place r) {
        try {
            return broker.seenHandedOut(r.tp(), r.offset(), DELIVERY_LIMIT);
        } catch (Exception e) {
            throw new IllegalStateException("cannot ask the broker's watcher about " + r, e);
        }
    }

    /** I1 and idempotence: every acknowledged record in its place with its value; no value twice. */
    private void checkLog(String bootstrap, Map<TopicPartition, Map<Long, String>> acked) {
        Map<String, Integer> copies = new HashMap<>();
        Map<TopicPartition, Map<Long, String>> log = new HashMap<>();
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            tps.add(new TopicPartition(TOPIC, p));
        }
        readToEnd(bootstrap, tps, "read_uncommitted", r -> {
            log.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new HashMap<>())
                    .put(r.offset(), r.value());
            copies.merge(r.value(), 1, Integer::sum);
        });
        acked.forEach((tp, records) -> records.forEach((offset, value) -> {
            String found = log.getOrDefault(tp, Map.of()).get(offset);
            if (!value.equals(found)) {
                violations.add("I1", tp + "@" + offset + " acknowledged as " + value + ", log holds " + found);
            }
        }));
        copies.forEach((value, n) -> {
            if (n > 1) {
                violations.add("idempotence", value + " written " + n + " times");
            }
        });
    }

    /** A new producer of the transactional id: the open transaction, if any, is aborted. */
    private static void fence(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", TRANSACTIONAL_ID);
        p.put("max.block.ms", "30000");
        try (KafkaProducer<String, String> fencer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            fencer.initTransactions();
        }
    }

    /** Transaction number to the records of it a read_committed reader sees. */
    private static Map<Integer, Integer> readCommitted(String bootstrap) {
        Map<Integer, Integer> seen = new HashMap<>();
        readToEnd(bootstrap, List.of(new TopicPartition(TXN_TOPIC, 0), new TopicPartition(TXN_TOPIC, 1)),
                "read_committed", r -> seen.merge(Integer.parseInt(r.key().substring(1)), 1, Integer::sum));
        return seen;
    }

    private static void readToEnd(String bootstrap, List<TopicPartition> tps, String isolation,
            Consumer<ConsumerRecord<String, String>> each) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("isolation.level", isolation);
        p.put("max.poll.records", "5000");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            Set<TopicPartition> done = new HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (done.size() < tps.size() && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(each);
                for (TopicPartition tp : tps) {
                    if (c.position(tp) >= end.get(tp)) {
                        done.add(tp);
                    }
                }
            }
            assertThat(done).as("%s read to the end of %s", isolation, tps).hasSize(tps.size());
        }
    }
}
