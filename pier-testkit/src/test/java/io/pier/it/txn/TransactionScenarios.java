package io.pier.it.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Transactions with the real 4.4 clients: commit and abort, what read_committed and
 * read_uncommitted consumers see, an open transaction holding read_committed readers back,
 * fencing by a second producer with the same transactional id, the broker aborting a transaction
 * left open past its timeout, and offsets sent to a transaction; run at each transaction
 * version the 4.4 clients speak ({@link TransactionsIT}: 2, {@link TransactionsV1IT}: 1).
 */
@Timeout(180)
abstract class TransactionScenarios {
    /** The broker under test, with {@code num.partitions=2}. */
    abstract PierExtension pier();

    /** The {@code transaction.version} the broker finalizes. */
    abstract short transactionVersion();

    KafkaProducer<String, String> producer(String transactionalId, String... keyValues) {
        Properties p = new Properties();
        p.put("bootstrap.servers", pier().bootstrapServers());
        p.put("transactional.id", transactionalId);
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    KafkaConsumer<String, String> consumer(IsolationLevel isolation, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", pier().bootstrapServers());
        p.put("isolation.level", isolation.toString());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        if (group != null) {
            p.put("group.id", group);
        }
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier().bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    /** Reads the assigned partitions from the start until {@code expected} records or the deadline. */
    List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> c, List<TopicPartition> tps,
            int expected, Duration within) {
        c.assign(tps);
        c.seekToBeginning(tps);
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.nanoTime() + within.toNanos();
        while (got.size() < expected && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                got.add(r);
            }
        }
        return got;
    }

    private static final String PADDING = "x".repeat(100);

    @Test
    void shouldKeepTheSequenceOrderOfManyProduceRequestsInFlightInATransaction() throws Exception {
        // Given a producer whose transactions of 1,000 records of about 100 B go out in batches of
        // about 150, up to five requests in flight (the first of a transaction waits while its
        // partition is added, or while the last transaction's markers are written)
        createTopic("txn-in-flight", 1);
        int transactions = 40;
        int perTransaction = 1_000;
        try (KafkaProducer<String, String> p = producer("txn-in-flight-producer")) {
            p.initTransactions();
            for (int t = 0; t < transactions; t++) {
                p.beginTransaction();
                for (int i = 0; i < perTransaction; i++) {
                    var unused = p.send(new ProducerRecord<>("txn-in-flight", "k", t + "-" + i + PADDING));
                }
                // When each commits (a batch refused out of sequence would fail the commit)
                p.commitTransaction();
            }
        }

        // Then every record is there once, in the order sent
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            List<ConsumerRecord<String, String>> got = readAll(c, List.of(new TopicPartition("txn-in-flight", 0)),
                    transactions * perTransaction, Duration.ofSeconds(30));
            List<String> sent = new ArrayList<>();
            for (int t = 0; t < transactions; t++) {
                for (int i = 0; i < perTransaction; i++) {
                    sent.add(t + "-" + i + PADDING);
                }
            }
            assertThat(got).extracting(ConsumerRecord::value).containsExactlyElementsOf(sent);
        }
    }

    @Test
    void shouldRunTransactionsAtTheFinalizedTransactionVersion() throws Exception {
        // Given the broker's transaction.version, as Admin (and kafka-features describe) sees it
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier().bootstrapServers()))) {
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            assertThat(features.supportedFeatures().get("transaction.version").maxVersion()).isEqualTo((short) 2);
            assertThat(features.finalizedFeatures().get("transaction.version").maxVersionLevel())
                    .isEqualTo(transactionVersion());
        }

        // When a producer commits three transactions
        createTopic("txn-version", 1);
        try (KafkaProducer<String, String> p = producer("txn-version-producer")) {
            p.initTransactions();
            for (int t = 0; t < 3; t++) {
                p.beginTransaction();
                var unused = p.send(new ProducerRecord<>("txn-version", "k", "v" + t));
                p.commitTransaction();
            }
        }

        // Then under version 2 every EndTxn bumped the producer epoch (KIP-890 part 2), under 1 none did
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier().bootstrapServers()))) {
            TransactionDescription d = admin.describeTransactions(List.of("txn-version-producer"))
                    .description("txn-version-producer").get();
            assertThat(d.state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
            assertThat(d.producerEpoch()).isEqualTo(transactionVersion() >= 2 ? 3 : 0);
        }
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            assertThat(readAll(c, List.of(new TopicPartition("txn-version", 0)), 3, Duration.ofSeconds(20)))
                    .extracting(ConsumerRecord::value).containsExactly("v0", "v1", "v2");
        }
    }

    @Test
    void shouldShowReadCommittedConsumersOnlyTheCommittedHalfOfHundredTransactions() throws Exception {
        // Given 100 transactions of 10 records over two partitions, every odd one aborted
        createTopic("txn-half", 2);
        try (KafkaProducer<String, String> p = producer("txn-half-producer")) {
            p.initTransactions();
            for (int t = 0; t < 100; t++) {
                p.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    sent.add(p.send(new ProducerRecord<>("txn-half", i % 2, "k" + i,
                            (t % 2 == 0 ? "commit-" : "abort-") + t)));
                }
                if (t % 2 == 0) {
                    p.commitTransaction();
                    // a commit flushes first: every send of it was acknowledged
                    for (Future<RecordMetadata> f : sent) {
                        assertThat(f.get().hasOffset()).isTrue();
                    }
                } else {
                    // flushed first, or the client drops what it has not sent yet and nothing is aborted
                    p.flush();
                    for (Future<RecordMetadata> f : sent) {
                        assertThat(f.get().hasOffset()).isTrue();
                    }
                    p.abortTransaction();
                }
            }
        }
        List<TopicPartition> tps = List.of(new TopicPartition("txn-half", 0), new TopicPartition("txn-half", 1));

        // When a read_committed and a read_uncommitted consumer read both partitions from the start
        List<ConsumerRecord<String, String>> committed;
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            committed = readAll(c, tps, 500, Duration.ofSeconds(20));
            // Then read_committed gets exactly the committed records, and nothing more arrives
            assertThat(c.poll(Duration.ofMillis(500))).isEmpty();
        }
        List<ConsumerRecord<String, String>> everything;
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_UNCOMMITTED, null)) {
            everything = readAll(c, tps, 1000, Duration.ofSeconds(20));
            assertThat(c.poll(Duration.ofMillis(500))).isEmpty();
        }
        assertThat(committed).hasSize(500).allSatisfy(r -> assertThat(r.value()).startsWith("commit-"));
        assertThat(committed.stream().map(ConsumerRecord::value).distinct()).hasSize(50);
        // read_uncommitted gets every data record, never a control record (the client drops those,
        // but their offsets take room: 100 markers per partition)
        assertThat(everything).hasSize(1000);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier().bootstrapServers()))) {
            ListOffsetsResult latest = admin.listOffsets(Map.of(tps.get(0), OffsetSpec.latest()));
            assertThat(latest.partitionResult(tps.get(0)).get().offset()).isEqualTo(500 + 100);
        }
    }

    @Test
    void shouldHoldReadCommittedReadersBackUntilAnOpenTransactionCommits() throws Exception {
        createTopic("txn-open", 1);
        TopicPartition tp = new TopicPartition("txn-open", 0);
        try (KafkaProducer<String, String> p = producer("txn-open-producer");
                KafkaConsumer<String, String> committed = consumer(IsolationLevel.READ_COMMITTED, null);
                KafkaConsumer<String, String> uncommitted = consumer(IsolationLevel.READ_UNCOMMITTED, null);
                Admin admin = Admin.create(Map.of("bootstrap.servers", pier().bootstrapServers()))) {
            // Given an open transaction of 5 records, sent and acknowledged
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 5; i++) {
                p.send(new ProducerRecord<>("txn-open", 0, "k", "v" + i)).get();
            }

            // Then a read_uncommitted consumer sees them and a read_committed one does not
            assertThat(readAll(uncommitted, List.of(tp), 5, Duration.ofSeconds(10))).hasSize(5);
            assertThat(readAll(committed, List.of(tp), 1, Duration.ofSeconds(2))).isEmpty();
            ListOffsetsOptions readCommitted = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()), readCommitted)
                    .partitionResult(tp).get().offset()).isZero();
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()))
                    .partitionResult(tp).get().offset()).isEqualTo(5);

            // When the transaction commits
            p.commitTransaction();

            // Then the read_committed consumer gets all five, and the last stable offset is past the marker
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                committed.poll(Duration.ofMillis(100)).forEach(got::add);
                return got.size() >= 5;
            });
            assertThat(got).extracting(ConsumerRecord::value).containsExactly("v0", "v1", "v2", "v3", "v4");
            assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest()), readCommitted)
                    .partitionResult(tp).get().offset()).isEqualTo(6);
        }
    }

    @Test
    void shouldFenceTheFirstProducerWhenASecondInitialisesTheSameTransactionalId() throws Exception {
        createTopic("txn-fence", 1);
        TopicPartition tp = new TopicPartition("txn-fence", 0);
        try (KafkaProducer<String, String> first = producer("txn-fence-id");
                KafkaProducer<String, String> second = producer("txn-fence-id")) {
            // Given a first producer with an open transaction
            first.initTransactions();
            first.beginTransaction();
            first.send(new ProducerRecord<>("txn-fence", 0, "k", "from-first")).get();

            // When a second producer initialises the same transactional id
            second.initTransactions();

            // Then the first is fenced: its commit fails, and its open transaction was aborted
            assertThatThrownBy(first::commitTransaction).isInstanceOf(KafkaException.class);
            second.beginTransaction();
            Future<RecordMetadata> sent = second.send(new ProducerRecord<>("txn-fence", 0, "k", "from-second"));
            second.commitTransaction();
            assertThat(sent.get().offset()).isPositive();
        }
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            List<ConsumerRecord<String, String>> got = readAll(c, List.of(tp), 1, Duration.ofSeconds(10));
            assertThat(c.poll(Duration.ofMillis(500))).isEmpty();
            assertThat(got).extracting(ConsumerRecord::value).containsExactly("from-second");
        }
    }

    @Test
    void shouldAbortATransactionLeftOpenPastItsTimeout() throws Exception {
        createTopic("txn-timeout", 1);
        TopicPartition tp = new TopicPartition("txn-timeout", 0);
        try (KafkaProducer<String, String> p = producer("txn-timeout-id", "transaction.timeout.ms", "1000");
                KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            // Given a transaction that is left open
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>("txn-timeout", 0, "k", "left-open")).get();

            // Then the broker aborts it after its timeout: the last stable offset moves past its
            // abort marker although nothing was committed, and the producer's commit fails
            c.assign(List.of(tp));
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                c.poll(Duration.ofMillis(100)).forEach(r -> {
                    throw new AssertionError("read_committed consumer got an aborted record: " + r);
                });
                return c.position(tp) >= 2;
            });
            assertThatThrownBy(p::commitTransaction).isInstanceOf(KafkaException.class);
        }
    }

    @Test
    void shouldMakeOffsetsSentToATransactionVisibleOnlyWhenItCommits() throws Exception {
        // Given a consume-transform-produce loop's first step: input records read by a group
        createTopic("txn-in", 1);
        createTopic("txn-out", 1);
        TopicPartition in = new TopicPartition("txn-in", 0);
        try (KafkaProducer<String, String> plain = producer("txn-in-filler")) {
            plain.initTransactions();
            plain.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add(plain.send(new ProducerRecord<>("txn-in", 0, "k", "in-" + i)));
            }
            plain.commitTransaction();
            assertThat(sent.get(9).get().offset()).isEqualTo(9);
        }
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, "txn-eos-group");
                KafkaProducer<String, String> p = producer("txn-eos-id")) {
            p.initTransactions();
            c.subscribe(List.of("txn-in"));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                c.poll(Duration.ofMillis(100)).forEach(got::add);
                return got.size() >= 10;
            });

            // When the output and the input offsets go in one transaction that first aborts, then commits
            Map<TopicPartition, OffsetAndMetadata> offsets = Map.of(in, new OffsetAndMetadata(got.get(9).offset() + 1));
            p.beginTransaction();
            Future<RecordMetadata> abortedOut = p.send(new ProducerRecord<>("txn-out", 0, "k", "aborted-out"));
            p.sendOffsetsToTransaction(offsets, c.groupMetadata());
            p.flush();
            assertThat(abortedOut.get().offset()).isZero();
            p.abortTransaction();
            Map<TopicPartition, OffsetAndMetadata> afterAbort = c.committed(Set.of(in));

            p.beginTransaction();
            Future<RecordMetadata> committedOut = p.send(new ProducerRecord<>("txn-out", 0, "k", "committed-out"));
            p.sendOffsetsToTransaction(offsets, c.groupMetadata());
            p.commitTransaction();
            // after the aborted record (offset 0) and its abort marker (1)
            assertThat(committedOut.get().offset()).isEqualTo(2);

            // Then the aborted offsets were never visible, the committed ones are
            assertThat(afterAbort.get(in)).isNull();
            assertThat(c.committed(Set.of(in)).get(in).offset()).isEqualTo(offsets.get(in).offset());
        }
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            List<ConsumerRecord<String, String>> out =
                    readAll(c, List.of(new TopicPartition("txn-out", 0)), 1, Duration.ofSeconds(10));
            assertThat(c.poll(Duration.ofMillis(500))).isEmpty();
            assertThat(out).extracting(ConsumerRecord::value).containsExactly("committed-out");
        }
    }
}
