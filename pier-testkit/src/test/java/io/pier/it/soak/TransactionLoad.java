package io.pier.it.soak;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
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
 *
 * <p>Each transaction also keeps what its client was told and under which producer id and epoch
 * (read from the producer's transaction manager), and how many faults came before it began and
 * before it ended: what a violation needs to be traced in the log and the broker's output.
 */
final class TransactionLoad implements Runnable {
    static final int RECORDS_PER_TXN = 5;

    enum Outcome { COMMITTED, ABORTED, UNKNOWN }

    private final String bootstrap;
    private final String topic;
    private final String transactionalId;
    private final Random random;
    private final Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
    private final Map<Integer, String> told = new ConcurrentHashMap<>();
    /** Transactions whose check failed, for the caller to look up in the log. */
    private final Set<Integer> suspects = new TreeSet<>();
    /** Faults announced so far (see {@link #faultComing}). */
    private final AtomicInteger faults = new AtomicInteger();
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
            int n = -1;
            String begun = null;
            try {
                producer.initTransactions();
                while (running) {
                    n = txn++;
                    outcomes.put(n, Outcome.UNKNOWN);
                    begun = "producer " + attempt + " " + producerIdAndEpoch(producer) + ", began after fault "
                            + faults.get() + " at " + System.currentTimeMillis();
                    told.put(n, begun);
                    producer.beginTransaction();
                    for (int i = 0; i < RECORDS_PER_TXN; i++) {
                        var unused = producer.send(new ProducerRecord<>(topic, i % 2, "t" + n, "t" + n + "-" + i));
                    }
                    boolean abort = random.nextInt(4) == 0;
                    if (abort) {
                        producer.abortTransaction();
                        outcomes.put(n, Outcome.ABORTED);
                    } else {
                        producer.commitTransaction();
                        outcomes.put(n, Outcome.COMMITTED);
                        committed.incrementAndGet();
                    }
                    told.put(n, begun + "; " + (abort ? "abort" : "commit") + " confirmed after fault "
                            + faults.get() + " at " + System.currentTimeMillis() + ", going on with "
                            + producerIdAndEpoch(producer));
                }
            } catch (KafkaException | IllegalStateException e) {
                // the broker went away: the open transaction's outcome stays unknown
                if (n >= 0 && outcomes.get(n) == Outcome.UNKNOWN) {
                    told.put(n, begun + "; failed after fault " + faults.get() + " at " + System.currentTimeMillis()
                            + ": " + e);
                }
            } finally {
                // at once: a producer left to flush would send its open transaction to the restarted broker
                producer.close(Duration.ZERO);
            }
        }
    }

    /**
     * The producer id and epoch the producer's transaction manager holds now, read by reflection
     * (kafka-clients does not expose them); "unknown" if its internals moved.
     */
    private static String producerIdAndEpoch(KafkaProducer<?, ?> producer) {
        try {
            Field manager = KafkaProducer.class.getDeclaredField("transactionManager");
            manager.setAccessible(true);
            Object tm = manager.get(producer);
            Field ids = tm.getClass().getDeclaredField("producerIdAndEpoch");
            ids.setAccessible(true);
            return String.valueOf(ids.get(tm));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "(producer id and epoch unknown: " + e + ")";
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

    /** The broker is about to go down: transactions confirmed from now on are confirmed after it. */
    void faultComing() {
        faults.incrementAndGet();
    }

    /** What the client of transaction {@code n} was told, and under which producer id and epoch. */
    String told(int n) {
        return "transaction " + n + " (" + outcomes.get(n) + "): " + told.getOrDefault(n, "never begun");
    }

    /** The transactions whose check failed so far, in order. */
    synchronized List<Integer> suspects() {
        return List.copyOf(suspects);
    }

    private synchronized void suspect(int n) {
        suspects.add(n);
    }

    /**
     * Checks what a read_committed reader saw (transaction number to records of it) against the
     * outcomes: whole or absent, committed ones whole, aborted ones absent.
     */
    void check(Map<Integer, Integer> seen, Violations violations) {
        seen.forEach((n, count) -> {
            if (count != RECORDS_PER_TXN) {
                suspect(n);
                violations.add("atomic transactions", "transaction " + n + " shows " + count + " of "
                        + RECORDS_PER_TXN + " records under read_committed; " + told(n));
            }
            if (outcomes.get(n) == Outcome.ABORTED) {
                suspect(n);
                violations.add("atomic transactions", "aborted transaction " + n + " visible under read_committed; "
                        + told(n));
            }
        });
        outcomes.forEach((n, outcome) -> {
            if (outcome == Outcome.COMMITTED && !seen.containsKey(n)) {
                suspect(n);
                violations.add("atomic transactions", "committed transaction " + n + " missing under read_committed; "
                        + told(n));
            }
        });
    }
}
