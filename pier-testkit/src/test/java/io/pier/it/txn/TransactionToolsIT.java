package io.pier.it.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.admin.KafkaTool;
import io.pier.server.Pier;
import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.ProducerPerformance;
import org.apache.kafka.tools.TransactionsCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's {@code kafka-transactions.sh} (TransactionsCommand: list, describe, describe-producers,
 * find-hanging, abort) and {@code kafka-producer-perf-test.sh --transactional-id} (kafka-tools
 * 4.4), run unchanged against Pier. Assertions are on what they print, column by column, and on
 * what a read_committed consumer then sees.
 *
 * <p>A hanging transaction is one a partition holds open while its coordinator does not know it
 * (the tool checks ListTransactions and DescribeTransactions): Pier's Produce path refuses a
 * transactional batch outside its transaction (KIP-890), so the test makes one the way it happens
 * in Kafka, by losing the coordinator's state (here its {@code transaction-state} folder) while
 * the partition's log keeps the transaction's records.
 */
@Timeout(240)
class TransactionToolsIT {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "1");

    @TempDir
    Path hangingDataDir;

    private static KafkaTool.Result transactions(String bootstrap, String... args) throws Exception {
        String[] all = Stream.concat(Stream.of("--bootstrap-server", bootstrap), Stream.of(args))
                .toArray(String[]::new);
        return KafkaTool.run(TransactionsCommand::main, all);
    }

    /** A table the tool printed: the header's columns, then each row's, tab-separated and padded. */
    private static List<List<String>> table(KafkaTool.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        List<List<String>> rows = new ArrayList<>();
        r.out().lines().filter(l -> !l.isBlank())
                .forEach(l -> rows.add(Stream.of(l.split("\t")).map(String::trim).toList()));
        return rows;
    }

    private static List<String> rowStartingWith(List<List<String>> table, String first) {
        return table.stream().skip(1).filter(r -> r.get(0).equals(first)).findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + first + " in " + table));
    }

    private static KafkaProducer<String, String> producer(String bootstrap, String transactionalId) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        if (transactionalId != null) {
            props.put("transactional.id", transactionalId);
            props.put("transaction.timeout.ms", "600000");
        }
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static void sendPlain(String bootstrap, String topic, int count) throws Exception {
        try (KafkaProducer<String, String> p = producer(bootstrap, null)) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, "plain-" + i)).get();
            }
        }
    }

    /** Sends {@code count} records and waits until each is acknowledged. */
    private static void sendInTransaction(KafkaProducer<String, String> txn, String topic, String prefix, int count)
            throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            sent.add(txn.send(new ProducerRecord<>(topic, 0, null, prefix + i)));
        }
        txn.flush();
        for (Future<RecordMetadata> f : sent) {
            f.get();
        }
    }

    private static long latest(Admin admin, TopicPartition tp, IsolationLevel isolation) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).all().get()
                .get(tp).offset();
    }

    /** Every value a read_committed consumer reads from the start of {@code tp}, up to its last stable offset. */
    private static List<String> readCommitted(String bootstrap, TopicPartition tp, long lastStableOffset) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("isolation.level", "read_committed");
        props.put("auto.offset.reset", "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + DEADLINE.toMillis();
            for (int polls = 0; polls < 300 && System.currentTimeMillis() < deadline; polls++) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    values.add(r.value());
                }
                if (c.position(tp) >= lastStableOffset) {
                    break;
                }
            }
            assertThat(c.position(tp)).as("read_committed position").isEqualTo(lastStableOffset);
        }
        return values;
    }

    @Test
    void shouldListDescribeAndDescribeTheProducersOfAnOpenTransaction() throws Exception {
        String bootstrap = PIER.bootstrapServers();
        String topic = "tools-open";
        String id = "tools-open-txn";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
                KafkaProducer<String, String> txn = producer(bootstrap, id)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            // Given two plain (idempotent) records at 0..1, then a transaction left open at 2..4
            sendPlain(bootstrap, topic, 2);
            txn.initTransactions();
            txn.beginTransaction();
            long sentFrom = System.currentTimeMillis();
            sendInTransaction(txn, topic, "open-", 3);
            long sentTo = System.currentTimeMillis();

            // list: the id, its coordinator, producer id and state
            List<List<String>> listed = table(transactions(bootstrap, "list"));
            assertThat(listed.get(0)).containsExactly("TransactionalId", "Coordinator", "ProducerId",
                    "TransactionState");
            List<String> row = rowStartingWith(listed, id);
            String producerId = row.get(2);
            assertThat(Long.parseLong(producerId)).isNotNegative();
            assertThat(row).containsExactly(id, String.valueOf(node), producerId, "Ongoing");
            // ... and with 4.4's filters: open for more than 0 ms but not an hour, its id matching the pattern
            assertThat(table(transactions(bootstrap, "list", "--duration-filter", "0")).stream().skip(1)
                    .map(r -> r.get(0))).contains(id);
            assertThat(table(transactions(bootstrap, "list", "--duration-filter", "3600000"))).hasSize(1);
            assertThat(rowStartingWith(table(transactions(bootstrap, "list", "--transactional-id-pattern",
                    "tools-open-.*")), id)).containsExactly(row.toArray(String[]::new));
            assertThat(table(transactions(bootstrap, "list", "--transactional-id-pattern", "other-.*"))).hasSize(1);

            // describe: the same producer, its timeout, and the one partition in the transaction
            List<List<String>> described = table(transactions(bootstrap, "describe", "--transactional-id", id));
            assertThat(described.get(0)).containsExactly("CoordinatorId", "TransactionalId", "ProducerId",
                    "ProducerEpoch", "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                    "TransactionDurationMs", "TopicPartitions");
            assertThat(described).hasSize(2);
            List<String> d = described.get(1);
            assertThat(d.subList(0, 6)).containsExactly(String.valueOf(node), id, producerId, "0", "Ongoing",
                    "600000");
            assertThat(Long.parseLong(d.get(6))).isBetween(sentFrom - 60_000, sentTo);
            assertThat(Long.parseLong(d.get(7))).isNotNegative();
            assertThat(d.get(8)).isEqualTo(topic + "-0");

            // describe-producers: the idempotent producer with no transaction, the open one from offset 2
            List<List<String>> producers = table(transactions(bootstrap, "describe-producers", "--topic", topic,
                    "--partition", "0"));
            assertThat(producers.get(0)).containsExactly("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch",
                    "LastSequence", "LastTimestamp", "CurrentTransactionStartOffset");
            assertThat(producers).hasSize(3);
            List<String> open = rowStartingWith(producers, producerId);
            assertThat(open.subList(1, 4)).containsExactly("0", "-1", "2");
            assertThat(Long.parseLong(open.get(4))).isBetween(sentFrom, sentTo);
            assertThat(open.get(5)).isEqualTo("2");
            List<String> plain = producers.get(1).get(0).equals(producerId) ? producers.get(2) : producers.get(1);
            assertThat(plain.subList(1, 6)).containsExactly("0", "-1", "1", plain.get(4), "None");

            // find-hanging: open for longer than 0 minutes, but its coordinator has the partition: not hanging
            List<List<String>> hanging = table(transactions(bootstrap, "find-hanging", "--broker-id",
                    String.valueOf(node), "--max-transaction-timeout", "0"));
            assertThat(hanging).containsExactly(List.of("Topic", "Partition", "ProducerId", "ProducerEpoch",
                    "CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"));
            assertThat(latest(admin, tp, IsolationLevel.READ_COMMITTED)).isEqualTo(2);

            // (A partition that does not exist answers UNKNOWN_TOPIC_OR_PARTITION, which the admin
            // client retries until its timeout, as against Kafka: ProtocolVersionMatrixIT checks the code.)

            // When the transaction commits
            txn.commitTransaction();

            // Then its producer has no transaction any more, its marker's coordinator epoch is known,
            // and the coordinator lists the id as committed
            // (its last timestamp is now the marker's, as in Kafka)
            // (transaction version 2: the marker carries the bumped epoch and restarts the sequence,
            // as Kafka 4.4 shows; the markers follow the commit's answer, hence the wait)
            List<String> committed = await().atMost(Duration.ofSeconds(20)).until(
                    () -> rowStartingWith(table(transactions(bootstrap, "describe-producers", "--topic",
                            topic, "--partition", "0")), producerId),
                    r -> r.get(5).equals("None"));
            assertThat(committed.subList(1, 4)).containsExactly("1", "0", "-1");
            assertThat(Long.parseLong(committed.get(4))).isGreaterThanOrEqualTo(Long.parseLong(open.get(4)));
            assertThat(committed.get(5)).isEqualTo("None");
            assertThat(rowStartingWith(table(transactions(bootstrap, "list")), id))
                    .containsExactly(id, String.valueOf(node), producerId, "CompleteCommit");
            assertThat(readCommitted(bootstrap, tp, latest(admin, tp, IsolationLevel.READ_COMMITTED)))
                    .containsExactly("plain-0", "plain-1", "open-0", "open-1", "open-2");
        }
    }

    @Test
    void shouldFindAndAbortATransactionItsCoordinatorForgot() throws Exception {
        String topic = "tools-hanging";
        TopicPartition tp = new TopicPartition(topic, 0);
        Pier pier = Pier.builder().dataDir(hangingDataDir).start();
        int port = pier.port();
        long sentFrom;
        long sentTo;
        try {
            // Given two plain records at 0..1 and a transaction of three records at 2..4, never ended
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            }
            sendPlain(pier.bootstrapServers(), topic, 2);
            KafkaProducer<String, String> txn = producer(pier.bootstrapServers(), "tools-hanging-txn");
            txn.initTransactions();
            txn.beginTransaction();
            sentFrom = System.currentTimeMillis();
            sendInTransaction(txn, topic, "hanging-", 3);
            sentTo = System.currentTimeMillis();
            txn.close(Duration.ZERO); // a forced close sends no abort
        } finally {
            pier.close();
        }
        // ... and a broker that lost its coordinator's state, but not the partition's log
        deleteRecursively(hangingDataDir.resolve("transaction-state"));
        pier = Pier.builder().dataDir(hangingDataDir).port(port).start();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()))) {
            String bootstrap = pier.bootstrapServers();
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            assertThat(latest(admin, tp, IsolationLevel.READ_UNCOMMITTED)).isEqualTo(5);
            assertThat(latest(admin, tp, IsolationLevel.READ_COMMITTED)).isEqualTo(2);
            assertThat(table(transactions(bootstrap, "list"))).hasSize(1);

            // When find-hanging looks for transactions open longer than 0 minutes
            List<List<String>> hanging = table(transactions(bootstrap, "find-hanging", "--broker-id",
                    String.valueOf(node), "--max-transaction-timeout", "0"));

            // Then it finds this one: its partition, producer, start offset and last timestamp
            assertThat(hanging).hasSize(2);
            List<String> h = hanging.get(1);
            assertThat(h.subList(0, 2)).containsExactly(topic, "0");
            assertThat(Long.parseLong(h.get(2))).isNotNegative();
            assertThat(h.subList(3, 6)).containsExactly("0", "-1", "2");
            assertThat(Long.parseLong(h.get(6))).isBetween(sentFrom, sentTo);
            assertThat(h.get(7)).isEqualTo("0");
            // ... but not with the default bound of 15 minutes, which it is younger than
            assertThat(table(transactions(bootstrap, "find-hanging", "--broker-id", String.valueOf(node))))
                    .hasSize(1);

            // abort refuses a start offset no transaction has
            KafkaTool.Result wrong = transactions(bootstrap, "abort", "--topic", topic, "--partition", "0",
                    "--start-offset", "3");
            assertThat(wrong.exitCode()).isEqualTo(1);
            assertThat(wrong.err()).contains("Could not find any open transactions starting at offset 3 on partition "
                    + topic + "-0");

            // When abort ends it by its start offset (WriteTxnMarkers, an ABORT marker at 5)
            KafkaTool.Result aborted = transactions(bootstrap, "abort", "--topic", topic, "--partition", "0",
                    "--start-offset", "2");
            assertThat(aborted.exitCode()).as(aborted.out() + aborted.err()).isZero();

            // Then the last stable offset moves past the marker, a read_committed consumer skips the
            // aborted records, and nothing is left hanging
            assertThat(latest(admin, tp, IsolationLevel.READ_COMMITTED)).isEqualTo(6);
            assertThat(readCommitted(bootstrap, tp, 6)).containsExactly("plain-0", "plain-1");
            assertThat(rowStartingWith(table(transactions(bootstrap, "describe-producers", "--topic", topic,
                    "--partition", "0")), h.get(2)).get(5)).isEqualTo("None");
            assertThat(table(transactions(bootstrap, "find-hanging", "--broker-id", String.valueOf(node),
                    "--max-transaction-timeout", "0"))).hasSize(1);
        } finally {
            pier.close();
        }
    }

    @Test
    void shouldRunTheProducerPerfTestInTransactionsThatReadCommittedConsumersRead() throws Exception {
        String bootstrap = PIER.bootstrapServers();
        String topic = "tools-perf";
        String id = "tools-perf-txn";
        TopicPartition tp = new TopicPartition(topic, 0);
        int records = 3_000;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();

            // When kafka-producer-perf-test sends in transactions of at most 50 ms
            KafkaTool.Result perf = KafkaTool.run(ProducerPerformance::main, "--topic", topic, "--num-records",
                    String.valueOf(records), "--record-size", "100", "--throughput", "-1", "--transactional-id", id,
                    "--transaction-duration-ms", "50", "--command-property", "bootstrap.servers=" + bootstrap);

            // Then it reports every record sent, and its last transaction committed
            assertThat(perf.exitCode()).as(perf.out() + perf.err()).isZero();
            assertThat(perf.out()).containsPattern("(?m)^" + records + " records sent, ");
            // (the markers are written after EndTxn is answered, so the state completes a moment later)
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .pollInterval(java.time.Duration.ofMillis(50)).untilAsserted(() ->
                            assertThat(rowStartingWith(table(transactions(bootstrap, "list")), id).get(3))
                                    .isEqualTo("CompleteCommit"));

            // And a read_committed consumer reads all of them, the markers between them taking offsets too
            long lastStable = latest(admin, tp, IsolationLevel.READ_COMMITTED);
            assertThat(lastStable).isEqualTo(latest(admin, tp, IsolationLevel.READ_UNCOMMITTED))
                    .isGreaterThan(records);
            List<String> read = readCommitted(bootstrap, tp, lastStable);
            assertThat(read).hasSize(records).allSatisfy(v -> assertThat(v).hasSize(100));
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
