package io.pier.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table every gateway node shares through the upstream: a compacted one-partition topic (key,
 * value; a null value deletes the key) that each node writes with an idempotent producer and reads
 * from its beginning on a thread of its own, handing every record, its own included, to {@code
 * apply} in the topic's order. A node knows how far it has read, so it can wait until a write of
 * its own, or everything written before some moment, applies here ({@link #sent}, {@link
 * #caughtUp}). Share-group settings ({@link GroupConfigSync}) and SCRAM credentials ({@link
 * UpstreamScramCredentials}) use it.
 */
final class CompactedTopic implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CompactedTopic.class);
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private record Waiter(long offset, CompletableFuture<Void> done) {}

    private final TopicPartition partition;
    private final KafkaProducer<String, String> producer;
    private final KafkaConsumer<String, String> consumer;
    private final Admin admin;
    private final Consumer<ConsumerRecord<String, String>> apply;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    /** The offset after the last record applied; written by the reading thread only. */
    private volatile long applied;
    private volatile boolean running = true;

    private CompactedTopic(String topic, Map<String, Object> upstream, String threadName,
            Consumer<ConsumerRecord<String, String>> apply) {
        this.partition = new TopicPartition(topic, 0);
        this.apply = apply;
        Map<String, Object> p = new HashMap<>(upstream);
        p.put("acks", "all");
        p.put("enable.idempotence", true);
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        Map<String, Object> c = new HashMap<>(upstream);
        c.put("enable.auto.commit", false);
        c.put("isolation.level", "read_committed");
        this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
        this.admin = Admin.create(upstream);
        this.thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
    }

    /**
     * Creates the topic unless it exists (compacted, replicas min(3, brokers), {@code
     * min.insync.replicas} min(2, that)) and starts applying it from its beginning.
     */
    static CompactedTopic start(String topic, Map<String, Object> upstream, String threadName,
            Consumer<ConsumerRecord<String, String>> apply) throws Exception {
        try (Admin admin = Admin.create(upstream)) {
            int brokers = admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).size();
            short replicas = (short) Math.max(1, Math.min(3, brokers));
            try {
                admin.createTopics(List.of(new NewTopic(topic, 1, replicas).configs(Map.of(
                        TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                        TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, String.valueOf(Math.min(2, replicas))))))
                        .all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            awaitListed(admin, topic);
        }
        CompactedTopic table = new CompactedTopic(topic, upstream, threadName, apply);
        table.consumer.assign(List.of(table.partition));
        table.consumer.seekToBeginning(List.of(table.partition));
        table.thread.start();
        return table;
    }

    /**
     * Waits until the upstream lists the topic's partition: a topic just created is known to the
     * controller before its brokers, and a list of its offsets fails meanwhile.
     */
    private static void awaitListed(Admin admin, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
                        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    String topic() {
        return partition.topic();
    }

    /** A record for the table's partition; its headers may be added before {@link #send}. */
    ProducerRecord<String, String> record(String key, String value) {
        return new ProducerRecord<>(partition.topic(), partition.partition(), key, value);
    }

    /** Completes with the record's offset once the upstream has it. */
    CompletableFuture<Long> send(ProducerRecord<String, String> record) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        var unused = producer.send(record, (md, e) -> {
            if (e != null) {
                done.completeExceptionally(e);
            } else {
                done.complete(md.offset());
            }
        });
        return done;
    }

    /** {@link #send}, then waits until this node has applied the record too. */
    CompletableFuture<Void> sent(ProducerRecord<String, String> record) {
        return send(record).thenCompose(offset -> appliedPast(offset + 1));
    }

    /** Completes once every record written to the upstream before this call is applied here. */
    CompletableFuture<Void> caughtUp() {
        return admin.listOffsets(Map.of(partition, OffsetSpec.latest())).partitionResult(partition)
                .toCompletionStage().toCompletableFuture().thenCompose(info -> appliedPast(info.offset()));
    }

    private CompletableFuture<Void> appliedPast(long end) {
        if (applied >= end) {
            return CompletableFuture.completedFuture(null);
        }
        Waiter w = new Waiter(end, new CompletableFuture<>());
        waiters.add(w);
        if (applied >= end) {
            w.done().complete(null);
        }
        return w.done().orTimeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    apply.accept(r);
                }
                applied = consumer.position(partition);
                waiters.removeIf(w -> {
                    if (applied >= w.offset()) {
                        w.done().complete(null);
                        return true;
                    }
                    return false;
                });
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            LOG.error("Reading {} from the upstream failed; this node stops following it", partition, e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
        List<Waiter> left = new ArrayList<>(waiters);
        left.forEach(w -> w.done().completeExceptionally(new IllegalStateException("the gateway is stopping")));
    }
}
