package io.pier.it.soak;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An idempotent producer (acks=all) writing values {@code p<seq>} round-robin over the topic's
 * partitions until stopped, through every kill. It notes each acknowledged record's place: I1
 * says each must be there, with its value, after any number of restarts.
 */
final class IdempotentProduceLoad implements Runnable {
    private static final long MAX_RECORDS = 10_000_000;
    private static final long PAUSE_MS = 20;

    private final String bootstrap;
    private final String topic;
    private final int partitions;
    private final Map<TopicPartition, Map<Long, String>> acked = new ConcurrentHashMap<>();
    private final AtomicLong ackedCount = new AtomicLong();
    private volatile boolean running = true;

    IdempotentProduceLoad(String bootstrap, String topic, int partitions) {
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.partitions = partitions;
    }

    @Override
    public void run() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "120000");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (long seq = 0; running && seq < MAX_RECORDS; seq++) {
                String value = "p" + seq;
                try {
                    var unused = producer.send(new ProducerRecord<>(topic, (int) (seq % partitions), null, value),
                            (md, e) -> {
                                if (e == null) {
                                    acked.computeIfAbsent(new TopicPartition(md.topic(), md.partition()),
                                            tp -> new ConcurrentHashMap<>()).put(md.offset(), value);
                                    ackedCount.incrementAndGet();
                                }
                            });
                } catch (KafkaException e) {
                    // the broker is down; the callback reports the rest
                }
                if (seq % 100 == 0 && !pause(producer)) {
                    break;
                }
            }
            producer.flush();
        }
    }

    /**
     * Flushes (a small in-flight window, so kills land between acknowledgements) and sleeps a
     * little: a few thousand records a second, which the share group keeps up with. False once
     * interrupted.
     */
    private static boolean pause(KafkaProducer<String, String> producer) {
        producer.flush();
        try {
            Thread.sleep(PAUSE_MS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void stop() {
        running = false;
    }

    long ackedCount() {
        return ackedCount.get();
    }

    /** Per partition, offset to value of every acknowledged record. */
    Map<TopicPartition, Map<Long, String>> acked() {
        return acked;
    }
}
