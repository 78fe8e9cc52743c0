package io.pier.it.faults;

import static io.pier.it.faults.StorageFaultClients.createTopic;
import static io.pier.it.faults.StorageFaultClients.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.log.FaultyDisk;
import io.pier.server.Pier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage-fault policy (docs/reliability.md, "Storage faults") on the committed-offset log
 * ({@code <data>/consumer-offsets}) and the transaction log ({@code <data>/transaction-state}),
 * each full or failing with EIO while real clients commit: a commit the log could not take is
 * not confirmed, the broker stops, and the restart shows exactly what was confirmed.
 */
@Timeout(120)
class StorageFaultStateLogIT {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final String OFFSETS_DIR = "consumer-offsets";
    private static final String TRANSACTIONS_DIR = "transaction-state";

    @TempDir
    Path dataDir;

    @Test
    void shouldStopWhenTheOffsetLogIsFullAndKeepTheLastConfirmedCommit() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        OffsetRun run = commitUntilTheOffsetLogFails("offsets-full", disk, d -> d.fill(dataDir.resolve(OFFSETS_DIR)));
        assertThat(disk.refusedWrites()).isPositive();

        // Still full: the broker must not serve, and must leave the log as it was.
        assertThatThrownBy(() -> Pier.builder().dataDir(dataDir).port(run.port()).fileIO(disk).start().close())
                .satisfies(e -> System.err.println("STILL FULL START: " + e))
                .hasStackTraceContaining("No space left on device");

        assertCommittedAfterRestart(run);
    }

    @Test
    void shouldStopWhenTheOffsetLogFailsItsFsyncAndKeepTheLastConfirmedCommit() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        OffsetRun run = commitUntilTheOffsetLogFails("offsets-eio", disk,
                d -> d.failForces(dataDir.resolve(OFFSETS_DIR)));
        assertThat(disk.ioErrors()).isPositive();
        assertCommittedAfterRestart(run);
    }

    @Test
    void shouldStopWhenTheTransactionLogIsFullAtCommitAndKeepEveryTransactionWholeOrNotAtAll() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        TxnRun run = transactUntilTheLogFails("txn-full", disk, d -> d.fill(dataDir.resolve(TRANSACTIONS_DIR)), true);
        assertThat(disk.refusedWrites()).isPositive();
        assertTransactionsAfterRestart(run);
    }

    @Test
    void shouldStopWhenTheTransactionLogFailsAtAbortAndKeepEveryTransactionWholeOrNotAtAll() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        TxnRun run = transactUntilTheLogFails("txn-eio", disk, d -> d.failWrites(dataDir.resolve(TRANSACTIONS_DIR)),
                false);
        assertThat(disk.ioErrors()).isPositive();
        assertTransactionsAfterRestart(run);
    }

    /** The broker's port, the group and partition, and the offset of the last commit the client was told of. */
    private record OffsetRun(int port, String group, TopicPartition tp, long confirmed) {}

    /**
     * A group consumer commits with commitSync after each poll of ten records; after three
     * confirmed commits {@code fault} hits the offset log. The next commit must fail and the
     * broker stop with its FATAL line.
     */
    private OffsetRun commitUntilTheOffsetLogFails(String name, FaultyDisk disk, Consumer<FaultyDisk> fault)
            throws Exception {
        TopicPartition tp = new TopicPartition(name, 0);
        String group = name + "-group";
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        long confirmed = -1;
        try (StderrTee log = StderrTee.start()) {
            createTopic(pier.bootstrapServers(), name);
            StorageFaultClients.produce(pier.bootstrapServers(), name, "o", 100);
            try (KafkaConsumer<String, String> consumer = groupConsumer(pier.bootstrapServers(), group)) {
                consumer.subscribe(List.of(name));
                int commits = 0;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (commits < 3 && System.nanoTime() < deadline) {
                    long next = pollOnce(consumer, tp);
                    if (next >= 0) {
                        consumer.commitSync(Map.of(tp, new OffsetAndMetadata(next)));
                        confirmed = next;
                        commits++;
                    }
                }
                assertThat(commits).as("commits confirmed before the fault").isEqualTo(3);
                fault.accept(disk);
                long next = -1;
                for (int polls = 0; next < 0 && polls < 50; polls++) {
                    next = pollOnce(consumer, tp);
                }
                assertThat(next).as("records past the last commit").isGreaterThan(confirmed);
                long unconfirmed = next;
                assertThatThrownBy(() -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(unconfirmed))))
                        .satisfies(e -> System.err.println("CLIENT SAW: " + e));
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(log.text()).contains("FATAL: ").contains("the broker stops acknowledging and shuts down");
            return new OffsetRun(pier.port(), group, tp, confirmed);
        } finally {
            pier.close();
        }
    }

    /** On real files: the committed offset is the last one the client was told of. */
    private void assertCommittedAfterRestart(OffsetRun run) throws Exception {
        try (Pier again = Pier.builder().dataDir(dataDir).port(run.port()).start();
                Admin admin = Admin.create(Map.of("bootstrap.servers", again.bootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(run.group()).partitionsToOffsetAndMetadata().get();
            assertThat(committed.get(run.tp())).as("committed offset after the restart").isNotNull()
                    .extracting(OffsetAndMetadata::offset).isEqualTo(run.confirmed());
        }
    }

    /** The next offset after what one poll returned of {@code tp}, or -1 when it returned nothing. */
    private static long pollOnce(KafkaConsumer<String, String> consumer, TopicPartition tp) {
        long next = -1;
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)).records(tp)) {
            next = r.offset() + 1;
        }
        return next;
    }

    private static KafkaConsumer<String, String> groupConsumer(String bootstrap, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("max.poll.records", "10");
        p.put("request.timeout.ms", "3000");
        p.put("default.api.timeout.ms", "6000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /**
     * What a transactional run told its producer: the values of each transaction it confirmed
     * committed, of each it confirmed aborted, and of the one the fault cut (its end not confirmed).
     */
    private record TxnRun(int port, String topic, String transactionalId, List<String> committed,
            List<String> aborted, List<String> cut, boolean cutByCommit) {}

    /**
     * A transactional producer commits a transaction, aborts one, commits one, then writes five
     * records in a fourth (acknowledged), {@code fault} hits the transaction log, and the producer
     * commits ({@code commit}) or aborts it: that end must not be confirmed, and the broker must
     * stop.
     */
    private TxnRun transactUntilTheLogFails(String name, FaultyDisk disk, Consumer<FaultyDisk> fault, boolean commit)
            throws Exception {
        String transactionalId = name + "-tx";
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        List<String> committed = new ArrayList<>();
        List<String> aborted = new ArrayList<>();
        List<String> cut;
        try (StderrTee log = StderrTee.start()) {
            createTopic(pier.bootstrapServers(), name);
            KafkaProducer<String, String> producer = transactionalProducer(pier.bootstrapServers(), transactionalId);
            try {
                producer.initTransactions();
                committed.addAll(transaction(producer, name, "c0-", true));
                aborted.addAll(transaction(producer, name, "a1-", false));
                committed.addAll(transaction(producer, name, "c2-", true));
                producer.beginTransaction();
                cut = sendFive(producer, name, "x3-"); // acknowledged: only the end of the transaction is left
                fault.accept(disk);
                assertThatThrownBy(commit ? producer::commitTransaction : producer::abortTransaction)
                        .satisfies(e -> System.err.println("CLIENT SAW: " + e));
            } finally {
                producer.close(Duration.ofSeconds(1));
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(log.text()).contains("FATAL: ").contains("the broker stops acknowledging and shuts down");
            return new TxnRun(pier.port(), name, transactionalId, committed, aborted, cut, commit);
        } finally {
            pier.close();
        }
    }

    /**
     * On real files: a new producer of the same transactional id starts and commits, and a
     * read_committed consumer sees every confirmed commit, no confirmed abort, and the cut
     * transaction whole or not at all (not at all when its end was an abort).
     */
    private void assertTransactionsAfterRestart(TxnRun run) throws Exception {
        try (Pier again = Pier.builder().dataDir(dataDir).port(run.port()).start()) {
            List<String> after;
            try (KafkaProducer<String, String> producer =
                    transactionalProducer(again.bootstrapServers(), run.transactionalId())) {
                producer.initTransactions();
                after = transaction(producer, run.topic(), "n-", true);
            }
            List<String> seen = readCommitted(again.bootstrapServers(), run.topic());
            System.err.println("READ COMMITTED: " + seen);
            assertThat(seen).as("confirmed commits, and the new producer's").containsAll(run.committed())
                    .containsAll(after);
            assertThat(seen).as("confirmed aborts").doesNotContainAnyElementsOf(run.aborted());
            List<String> ofCut = seen.stream().filter(run.cut()::contains).toList();
            if (run.cutByCommit()) {
                assertThat(ofCut).as("the transaction whose commit was not confirmed, whole or not at all")
                        .satisfiesAnyOf(v -> assertThat(v).isEmpty(), v -> assertThat(v).isEqualTo(run.cut()));
            } else {
                assertThat(ofCut).as("the transaction the producer was aborting").isEmpty();
            }
            List<String> known = new ArrayList<>(run.committed());
            known.addAll(after);
            known.addAll(run.cut());
            assertThat(seen).as("nothing else, and nothing twice").isSubsetOf(known).doesNotHaveDuplicates();
        }
    }

    private static List<String> transaction(KafkaProducer<String, String> producer, String topic, String prefix,
            boolean commit) throws Exception {
        producer.beginTransaction();
        List<String> sent = sendFive(producer, topic, prefix);
        if (commit) {
            producer.commitTransaction();
        } else {
            producer.abortTransaction();
        }
        return sent;
    }

    /** Sends five records in the open transaction and waits for their acknowledgements. */
    private static List<String> sendFive(KafkaProducer<String, String> producer, String topic, String prefix)
            throws Exception {
        List<String> sent = values(prefix, 5);
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (String v : sent) {
            acks.add(producer.send(new ProducerRecord<>(topic, 0, null, v)));
        }
        for (Future<RecordMetadata> ack : acks) {
            ack.get(10, TimeUnit.SECONDS);
        }
        return sent;
    }

    private static KafkaProducer<String, String> transactionalProducer(String bootstrap, String transactionalId) {
        return StorageFaultClients.producer(bootstrap, Map.of("transactional.id", transactionalId));
    }

    /** Partition 0 of {@code topic} as a read_committed consumer sees it, up to its last stable offset. */
    private static List<String> readCommitted(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("isolation.level", "read_committed");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (c.position(tp) < end && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
            }
            assertThat(c.position(tp)).as("read up to the last stable offset").isGreaterThanOrEqualTo(end);
        }
        return values;
    }
}
