package io.pier.gateway;

import io.pier.log.LogConfig;
import io.pier.service.DeadLetterLookup;
import io.pier.service.DeadLetterQueues;
import io.pier.service.DeadLetterRecords;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway node's dead-letter queues: the upstream's topics, as every node and every client sees
 * them. The stock clients do the talking: Admin says whether a queue exists, how many partitions
 * it has and whether it has {@code errors.deadletterqueue.group.enable=true} (re-asked every
 * {@link #RECHECK_MS}) and creates one when asked; an idempotent producer ({@code acks=all})
 * appends the letters, so its own retries never write one twice; a consumer reads a queue
 * partition's tail back for {@link DeadLetterLookup}.
 *
 * <p><b>Exactly one letter.</b> As on a broker, a record's letter is in the queue before it is
 * ARCHIVED in the share state, and a node that loads it still ARCHIVING (after a takeover or a
 * restart) looks its letter up before writing it. Unlike a local append, a failed send may have
 * landed (the answer was lost), so {@link #mayLandAfterFailure()} has {@link
 * io.pier.service.DeadLetters} look those letters up too before writing them again. A send ends,
 * one way or the other, within {@code pier.gateway.session.timeout.ms}
 * ({@code delivery.timeout.ms}), about when another node can take the share-partition over, so a
 * node cut off from the upstream stops sending letters before another looks for them.
 *
 * <p><b>Threads.</b> Sends (which may block on the producer's metadata) and lookups run on one
 * thread of their own, never on a shard or the share-state writer; {@link #find} reads a map.
 */
public final class UpstreamDeadLetterQueues implements DeadLetterQueues, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UpstreamDeadLetterQueues.class);
    /** How long what was learnt of a queue topic stands before it is asked again. */
    static final long RECHECK_MS = 5_000;
    private static final Duration POLL = Duration.ofMillis(100);

    private record Known(Queue queue, long atNanos) {}

    private final Admin admin;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Map<String, Object> consumerConfig;
    private final Duration timeout;
    private final ExecutorService thread;
    private final Map<String, Known> known = new ConcurrentHashMap<>();
    private final Set<String> asking = ConcurrentHashMap.newKeySet();

    private UpstreamDeadLetterQueues(Admin admin, KafkaProducer<byte[], byte[]> producer,
            Map<String, Object> consumerConfig, Duration timeout) {
        this.admin = admin;
        this.producer = producer;
        this.consumerConfig = consumerConfig;
        this.timeout = timeout;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "pier-dead-letters");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param upstreamSettings how to reach the upstream (bootstrap servers, security)
     * @param sendTimeout how long a send may take at most, retries included: the node's session
     *     timeout in the gateway group
     */
    public static UpstreamDeadLetterQueues open(Map<String, Object> upstreamSettings, Duration sendTimeout) {
        Map<String, Object> base = Map.copyOf(upstreamSettings);
        Map<String, Object> producerConfig = new HashMap<>(base);
        producerConfig.put("enable.idempotence", true);
        producerConfig.put("acks", "all");
        producerConfig.put("linger.ms", 0);
        producerConfig.put("delivery.timeout.ms", (int) sendTimeout.toMillis());
        producerConfig.put("request.timeout.ms", (int) Math.max(1, sendTimeout.toMillis() / 2));
        producerConfig.put("max.block.ms", sendTimeout.toMillis());
        producerConfig.put("key.serializer", ByteArraySerializer.class.getName());
        producerConfig.put("value.serializer", ByteArraySerializer.class.getName());
        Map<String, Object> consumerConfig = new HashMap<>(base);
        consumerConfig.put("enable.auto.commit", false);
        consumerConfig.put("auto.offset.reset", "none");
        consumerConfig.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerConfig.put("value.deserializer", ByteArrayDeserializer.class.getName());
        consumerConfig.remove("group.id");
        Admin admin = Admin.create(base);
        try {
            return new UpstreamDeadLetterQueues(admin, new KafkaProducer<>(producerConfig), consumerConfig,
                    sendTimeout);
        } catch (RuntimeException e) {
            admin.close(Duration.ZERO);
            throw e;
        }
    }

    @Override
    public Queue find(String name) {
        Known k = known.get(name);
        if (k == null || System.nanoTime() - k.atNanos() > TimeUnit.MILLISECONDS.toNanos(RECHECK_MS)) {
            ask(name);
        }
        return k == null ? Queue.NOT_READY : k.queue();
    }

    /** Asks the upstream about a queue topic, one question per topic at a time. */
    private void ask(String name) {
        if (!asking.add(name)) {
            return;
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
        admin.describeTopics(List.of(name)).allTopicNames().toCompletionStage()
                .thenCompose(topics -> {
                    int partitions = topics.get(name).partitions().size();
                    return admin.describeConfigs(List.of(resource)).all().toCompletionStage().thenApply(configs -> {
                        ConfigEntry enabled = configs.get(resource).get(LogConfig.DEAD_LETTER_GROUP_ENABLE);
                        return enabled != null && "true".equalsIgnoreCase(enabled.value())
                                ? Queue.ready(partitions) : Queue.NOT_ENABLED;
                    });
                })
                .whenComplete((queue, failure) -> {
                    asking.remove(name);
                    if (failure == null) {
                        known.put(name, new Known(queue, System.nanoTime()));
                    } else if (Forwarding.unwrap(failure) instanceof UnknownTopicOrPartitionException) {
                        known.put(name, new Known(Queue.MISSING, System.nanoTime()));
                    } else {
                        // What was known stands; asked again at the next find.
                        LOG.debug("Describing dead-letter topic {} on the upstream failed: {}", name, failure.toString());
                    }
                });
    }

    @Override
    public CompletableFuture<Void> create(String name, int partitions, Map<String, String> configs) {
        return admin.createTopics(List.of(new NewTopic(name, Optional.of(partitions), Optional.empty())
                        .configs(configs))).all().toCompletionStage().toCompletableFuture()
                .whenComplete((v, failure) -> known.remove(name));
    }

    @Override
    public CompletableFuture<Appended> append(TopicPartition queue, List<SimpleRecord> letters) {
        CompletableFuture<Appended> result = new CompletableFuture<>();
        try {
            thread.execute(() -> send(queue, letters, result));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            result.complete(failed(e)); // closing: the records stay ARCHIVING for the next owner
        }
        return result;
    }

    /** On the queues' thread: sends the letters in order, and completes once all are acknowledged. */
    private void send(TopicPartition queue, List<SimpleRecord> letters, CompletableFuture<Appended> result) {
        int[] left = {letters.size()};
        Throwable[] first = {null};
        try {
            for (SimpleRecord letter : letters) {
                var unused = producer.send(new ProducerRecord<>(queue.topic(), queue.partition(), letter.timestamp(),
                        Utils.toNullableArray(letter.key()), Utils.toNullableArray(letter.value()), List.of(letter.headers())), (metadata, failure) -> {
                            synchronized (left) {
                                if (failure != null && first[0] == null) {
                                    first[0] = failure;
                                }
                                if (--left[0] == 0) {
                                    result.complete(first[0] == null ? Appended.OK : failed(first[0]));
                                }
                            }
                        });
            }
        } catch (RuntimeException e) {
            // Those sent may land: the caller looks them up before writing them again.
            result.complete(failed(e));
        }
    }

    /**
     * An error the upstream gave (a refusal for good, such as a letter too large, archives the
     * records without their letters, as on a broker); anything else (a timeout, the producer
     * closing) is taken as passing, so the records wait for their letters.
     */
    private static Appended failed(Throwable failure) {
        Throwable cause = Forwarding.unwrap(failure);
        if (cause instanceof ApiException api) {
            return new Appended(Errors.forException(api), api.getMessage());
        }
        return new Appended(Errors.REQUEST_TIMED_OUT, "sending to the upstream failed: " + cause);
    }

    @Override
    public boolean mayLandAfterFailure() {
        return true;
    }

    @Override
    public CompletableFuture<Set<String>> inQueue(TopicPartition queue, String groupId, TopicPartition source,
            Set<String> candidates) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return lookUp(queue, groupId, source, candidates);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, thread);
    }

    private Set<String> lookUp(TopicPartition queue, String groupId, TopicPartition source, Set<String> candidates)
            throws IOException {
        long start = offset(queue, OffsetSpec.earliest());
        long end = offset(queue, OffsetSpec.latest());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig)) {
            consumer.assign(Set.of(queue));
            return DeadLetterLookup.inQueue(start, end, (from, to) -> {
                // One set per letter: a record's letter and its batch-mates' share their fate (they
                // were written by one append, ARCHIVED by one state write).
                List<Set<String>> ours = new ArrayList<>();
                consumer.seek(queue, from);
                long stalledSince = System.nanoTime();
                while (consumer.position(queue, timeout) < to) {
                    var records = consumer.poll(POLL).records(queue);
                    if (records.isEmpty() && System.nanoTime() - stalledSince > timeout.toNanos()) {
                        throw new IOException("reading " + queue + " on the upstream made no progress at offset "
                                + consumer.position(queue) + " in " + timeout);
                    }
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        stalledSince = System.nanoTime();
                        if (r.offset() >= to) {
                            return ours;
                        }
                        String id = DeadLetterRecords.letterId(r.headers(), groupId, source);
                        if (id != null) {
                            ours.add(Set.of(id));
                        }
                    }
                }
                return ours;
            }, candidates);
        } catch (RuntimeException e) {
            throw new IOException("looking up the dead letters in " + queue + " on the upstream failed: " + e, e);
        }
    }

    private long offset(TopicPartition tp, OffsetSpec spec) throws IOException {
        try {
            return admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                    .partitionResult(tp).get(timeout.toMillis(), TimeUnit.MILLISECONDS).offset();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("cannot read the offsets of " + tp + " on the upstream: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading the offsets of " + tp, e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        producer.close(timeout);
        admin.close(timeout);
    }
}
