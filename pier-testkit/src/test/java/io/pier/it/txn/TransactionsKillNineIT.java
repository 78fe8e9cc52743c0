package io.pier.it.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ChildBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions across SIGKILL: a producer commits transactions of 10 records over two partitions
 * in a loop while the broker (a child process) is killed at an arbitrary moment, several times.
 * After each restart a read_committed consumer finds every transaction either whole or not at all,
 * and every transaction whose commit was acknowledged whole.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class TransactionsKillNineIT {
    private static final String TOPIC = "kill-nine-txn";
    private static final int RECORDS_PER_TXN = 10;
    private static final int KILLS = 3;
    private static final String TRANSACTIONAL_ID = "kill-nine-producer";

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void shouldShowEachTransactionWholeOrNotAtAllAfterKillNine() throws Exception {
        try (ChildBroker broker = new ChildBroker(dataDir, scratch)) {
            broker.start(0);
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
            }
            Set<Integer> acked = ConcurrentHashMap.newKeySet();
            int next = 0;
            for (int cycle = 1; cycle <= KILLS; cycle++) {
                // Given a producer committing transaction after transaction
                int first = next;
                AtomicBoolean stop = new AtomicBoolean();
                AtomicInteger started = new AtomicInteger(first - 1);
                Thread producing = new Thread(() -> produce(broker.bootstrapServers(), first, acked, started, stop));
                producing.start();

                // When the broker is SIGKILLed while it runs (after a cycle-dependent while), then restarted
                Thread.sleep(700L + 400L * cycle);
                assertThat(broker.kill()).as("broker died").isTrue();
                stop.set(true);
                // It would otherwise wait out max.block.ms in the commit the kill cut off.
                producing.interrupt();
                producing.join(60_000);
                assertThat(producing.isAlive()).as("producer stopped").isFalse();
                next = started.get() + 1; // numbers are never reused, whatever became of the last one
                broker.start(cycle);

                // Then, once a new producer of the same id has fenced (and aborted) what was open,
                // every transaction is whole or absent, and every acknowledged one is there
                try (KafkaProducer<String, String> fencer = producer(broker.bootstrapServers())) {
                    fencer.initTransactions();
                }
                Map<Integer, Integer> seen = readCommitted(broker.bootstrapServers());
                assertThat(seen.values()).as("records per transaction after kill %d", cycle)
                        .allSatisfy(n -> assertThat(n).isEqualTo(RECORDS_PER_TXN));
                assertThat(seen.keySet()).as("acknowledged transactions after kill %d", cycle).containsAll(acked);
                assertThat(acked).as("commits acknowledged before kill %d", cycle).isNotEmpty();
            }
        }
    }

    private static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", TRANSACTIONAL_ID);
        p.put("max.block.ms", "10000");
        p.put("delivery.timeout.ms", "10000");
        p.put("request.timeout.ms", "5000");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Commits transactions numbered from {@code first} until stopped or failed, noting each number it starts. */
    private static void produce(String bootstrap, int first, Set<Integer> acked, AtomicInteger started,
            AtomicBoolean stop) {
        KafkaProducer<String, String> p = producer(bootstrap);
        try {
            p.initTransactions();
            for (int txn = first; !stop.get() && txn < first + 100_000; txn++) {
                started.set(txn);
                p.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < RECORDS_PER_TXN; i++) {
                    sent.add(p.send(new ProducerRecord<>(TOPIC, i % 2, "t" + txn, "t" + txn + "-" + i)));
                }
                p.commitTransaction();
                // commitTransaction flushed: every send of it is done (a failed one fails the commit)
                if (!sent.stream().allMatch(Future::isDone)) {
                    throw new IllegalStateException("transaction " + txn + " committed with sends outstanding");
                }
                acked.add(txn);
            }
        } catch (RuntimeException e) {
            // the broker went away mid-transaction, or the test interrupted this thread after
            // killing it: what was acknowledged so far is in `acked`
        } finally {
            // at once: a producer left to flush would send its open transaction to the restarted broker;
            // without the test's interrupt, which close() would take for its own when it joins its I/O thread
            boolean unusedInterrupted = Thread.interrupted();
            p.close(Duration.ZERO);
        }
    }

    /** Transaction number to records of it, read with read_committed up to the last stable offset. */
    private static Map<Integer, Integer> readCommitted(String bootstrap) {
        Map<Integer, Integer> seen = new HashMap<>();
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("isolation.level", IsolationLevel.READ_COMMITTED.toString());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            Set<TopicPartition> done = new HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (done.size() < tps.size() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    seen.merge(Integer.parseInt(r.key().substring(1)), 1, Integer::sum);
                }
                for (TopicPartition tp : tps) {
                    if (c.position(tp) >= end.get(tp)) {
                        done.add(tp);
                    }
                }
            }
            assertThat(done).as("read to the last stable offset").hasSize(tps.size());
        }
        return seen;
    }
}
