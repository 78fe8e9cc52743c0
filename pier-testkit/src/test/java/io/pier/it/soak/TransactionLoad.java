package io.pier.it.soak;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A transactional producer writing numbered transactions of {@link #RECORDS_PER_TXN} records over
 * two partitions, committing three in four and aborting the rest, through every kill (a new
 * producer of the same transactional id after each failure). Each transaction's outcome as the
 * client learnt it: committed, aborted, or unknown (the broker died first). Under read_committed
 * a committed one shows whole, an aborted one not at all, an unknown one whole or not at all.
 */
final class TransactionLoad implements Runnable {
    static final int RECORDS_PER_TXN = 5;

    enum Outcome { COMMITTED, ABORTED, UNKNOWN }

    private final String bootstrap;
    private final String topic;
    private final String transactionalId;
    private final Random random;
    private final Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
    private final AtomicInteger committed = new AtomicInteger();
    private volatile boolean running = true;

    TransactionLoad(String bootstrap, String topic, String transactionalId, long seed) {
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.transactionalId = transactionalId;
        this.random = new Random(seed);
    }

    @Override
    public void run() {
        int txn = 0;
        for (int attempt = 0; running && attempt < 100_000; attempt++) {
            KafkaProducer<String, String> producer = producer();
            try {
                producer.initTransactions();
                while (running) {
                    int n = txn++;
                    outcomes.put(n, Outcome.UNKNOWN);
                    producer.beginTransaction();
                    for (int i = 0; i < RECORDS_PER_TXN; i++) {
                        var unused = producer.send(new ProducerRecord<>(topic, i % 2, "t" + n, "t" + n + "-" + i));
                    }
                    if (random.nextInt(4) == 0) {
                        producer.abortTransaction();
                        outcomes.put(n, Outcome.ABORTED);
                    } else {
                        producer.commitTransaction();
                        outcomes.put(n, Outcome.COMMITTED);
                        committed.incrementAndGet();
                    }
                }
            } catch (KafkaException | IllegalStateException e) {
                // the broker went away: the open transaction's outcome stays unknown
            } finally {
                // at once: a producer left to flush would send its open transaction to the restarted broker
                producer.close(Duration.ZERO);
            }
        }
    }

    private KafkaProducer<String, String> producer() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", transactionalId);
        p.put("max.block.ms", "10000");
        p.put("delivery.timeout.ms", "10000");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    void stop() {
        running = false;
    }

    int committed() {
        return committed.get();
    }

    /**
     * Checks what a read_committed reader saw (transaction number to records of it) against the
     * outcomes: whole or absent, committed ones whole, aborted ones absent.
     */
    void check(Map<Integer, Integer> seen, Violations violations) {
        seen.forEach((n, count) -> {
            if (count != RECORDS_PER_TXN) {
                violations.add("atomic transactions", "transaction " + n + " shows " + count + " of "
                        + RECORDS_PER_TXN + " records under read_committed");
            }
            if (outcomes.get(n) == Outcome.ABORTED) {
                violations.add("atomic transactions", "aborted transaction " + n + " visible under read_committed");
            }
        });
        outcomes.forEach((n, outcome) -> {
            if (outcome == Outcome.COMMITTED && !seen.containsKey(n)) {
                violations.add("atomic transactions", "committed transaction " + n + " missing under read_committed");
            }
        });
    }
}
