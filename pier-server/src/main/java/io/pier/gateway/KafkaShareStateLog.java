package io.pier.gateway;

import io.pier.state.ShareStateLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The share-state records on one partition of a topic of the upstream Kafka cluster, for a Pier
 * node in gateway mode: it serves share groups itself but keeps their state where the upstream
 * keeps everything else, so another node can take the state over. Only the stock kafka-clients
 * talk to the upstream: a transactional producer writes, a {@code read_uncommitted} consumer
 * replays, the Admin client reads offsets and moves the start.
 *
 * <pre>
 *   open        initTransactions (fences the earlier writer with the same transactional id,
 *                 aborts its open transaction), then start = log start, end = log end
 *   append      commit the open transaction if it is older than the commit interval (end + 1:
 *                 the marker); begin one if none is open; send each entry; return end (predicted)
 *   flush       wait until the upstream acknowledged every record sent (acks=all): durable;
 *                 every record's offset must be the predicted one; end = last + 1
 *   sync        (a flush with nothing sent) commit the open transaction
 *   moveStart   Admin.deleteRecords: the upstream moves its log start durably
 *   replay      read_uncommitted from the log start to the log end, once no transaction is open
 * </pre>
 *
 * <p><b>Durable before committed.</b> A record the upstream acknowledged with {@code acks=all} is
 * replicated, whether its transaction commits or not: so a flush waits for the acknowledgements
 * only, and one transaction spans the flushes of up to a {@link #commitIntervalMs commit interval}
 * (a second, or a quarter of {@code transaction.timeout.ms}). It is committed before the next
 * append, so a failed commit fails records not sent yet, never a flush whose records are durable;
 * or, with nothing more to write, by a sync ({@link #syncWithinMs}). What a transaction per flush cost,
 * an EndTxn, the coordinator's two writes and a marker on the partition for every ShareFetch's
 * state, was most of the upstream's work for a gateway. The transaction is kept only for its
 * fencing; replay reads {@code read_uncommitted}, so the records of a transaction aborted by the
 * next writer's fence, or by its timeout, are replayed too: they were acknowledged, so a client may
 * have been told. Records sent and not acknowledged when a writer died may be replayed as well, as
 * the {@link ShareStateLog} contract allows (what was not flushed may or may not survive; within
 * the partition they land in order, so a prefix of them).
 *
 * <p><b>One writer.</b> The transactional id names the state partition's writer. When a gateway
 * node takes over a state partition, opening this log fences the node that wrote it before: its
 * open transaction is aborted and whatever that node (now a zombie) still sends or commits is
 * refused as of a fenced producer or a stale epoch, so nothing it writes after the fence lands.
 * With one writer the offsets are predictable: records are consecutive from the log end, and a
 * commit adds one control marker after them. They are not dense across commits, which the
 * {@link ShareStateLog} contract allows. A record at any other offset than predicted means someone
 * else writes to the partition: the flush fails.
 *
 * <p><b>Failure.</b> Any error (fenced, timed out, refused) is an {@link IOException}, and the log
 * refuses every later write: per {@link ShareStateLog}, a failure is fatal to the caller, which
 * never retries. A fence or a timeout is a {@link LostException}: the gateway gives the state
 * partition up and serves it again from the upstream, instead of stopping. Damage to the stored
 * bytes is the upstream's to detect (CRCs, replication).
 *
 * <p>Used by one thread at a time (see {@link ShareStateLog}); every call blocks on the upstream,
 * each wait bounded by the timeout given to {@link #open}.
 */
public final class KafkaShareStateLog implements ShareStateLog {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaShareStateLog.class);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long RECHECK_MS = 10;
    /** The longest a transaction stays open across flushes. */
    private static final long MAX_COMMIT_INTERVAL_MS = 1_000;
    /** The producer's linger: every flush sends at once; this only keeps a flush's records in one request. */
    private static final int LINGER_MS = 100;

    private final TopicPartition partition;
    private final Map<String, Object> clientConfig;
    private final Duration timeout;
    private final Admin admin;
    private final KafkaProducer<byte[], byte[]> producer;
    private long start;
    private long end;
    /**
     * The end of what the last flush or commit made durable: moveStart may go no further, and the
     * sends not flushed yet begin there.
     */
    private long durableEnd;
    /** The sends not flushed yet, in order; the i-th record is predicted at {@link #durableEnd} + i. */
    private final List<Future<RecordMetadata>> sends = new ArrayList<>();
    /** {@link System#nanoTime} when the open transaction began, or -1 with none open. */
    private long transactionBeganNanos = -1;
    private final long commitIntervalMs;
    private Throwable failure;
    private boolean closed;

    private KafkaShareStateLog(TopicPartition partition, Map<String, Object> clientConfig, Duration timeout,
            Admin admin, KafkaProducer<byte[], byte[]> producer, long commitIntervalMs) {
        this.partition = partition;
        this.commitIntervalMs = commitIntervalMs;
        this.clientConfig = clientConfig;
        this.timeout = timeout;
        this.admin = admin;
        this.producer = producer;
    }

    /**
     * Opens the log over {@code topic}'s {@code partition} (the topic must exist, see
     * {@link #createTopicIfMissing}) and fences any earlier writer with {@code transactionalId}.
     *
     * @param upstreamClientConfig how to reach the upstream (bootstrap servers, security); the
     *     settings this log depends on (serializers, transactions, acks, isolation) are its own
     * @param timeout bound of every wait on the upstream: a send, a commit, an offset lookup, the
     *     end of a transaction left open by the fenced writer, a replay that makes no progress
     * @throws IOException if the upstream cannot be reached, refuses, or does not answer in time
     */
    public static KafkaShareStateLog open(Map<String, Object> upstreamClientConfig, String topic, int partition,
            String transactionalId, Duration timeout) throws IOException {
        Objects.requireNonNull(transactionalId, "transactionalId");
        Map<String, Object> base = Map.copyOf(upstreamClientConfig);
        Map<String, Object> producerConfig = new HashMap<>(base);
        producerConfig.put("transactional.id", transactionalId);
        producerConfig.put("enable.idempotence", true);
        producerConfig.put("acks", "all");
        producerConfig.put("key.serializer", ByteArraySerializer.class.getName());
        producerConfig.put("value.serializer", ByteArraySerializer.class.getName());
        // initTransactions, commitTransaction and a send waiting for metadata block at most this
        // long; a flush waits for the acknowledgements at most this long (delivery.timeout.ms)
        producerConfig.put("max.block.ms", timeout.toMillis());
        long linger = Math.min(LINGER_MS, Math.max(0, timeout.toMillis() / 4));
        producerConfig.put("linger.ms", (int) linger);
        producerConfig.put("request.timeout.ms", (int) Math.max(1, timeout.toMillis() - linger));
        producerConfig.put("delivery.timeout.ms", (int) timeout.toMillis());
        long transactionTimeoutMs = Long.parseLong(String.valueOf(
                producerConfig.getOrDefault("transaction.timeout.ms", "60000")));
        Admin admin = null;
        KafkaProducer<byte[], byte[]> producer = null;
        try {
            admin = Admin.create(base);
            producer = new KafkaProducer<>(producerConfig);
            KafkaShareStateLog log = new KafkaShareStateLog(new TopicPartition(topic, partition), base, timeout,
                    admin, producer, commitIntervalMs(transactionTimeoutMs));
            producer.initTransactions();
            long logEnd = log.awaitNoOpenTransaction();
            log.start = log.offset(OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            log.end = logEnd;
            log.durableEnd = logEnd;
            return log;
        } catch (IOException | RuntimeException e) {
            if (producer != null) {
                producer.close(Duration.ZERO);
            }
            if (admin != null) {
                admin.close(Duration.ZERO);
            }
            throw e instanceof IOException io ? io
                    : new IOException("cannot open the share-state log on upstream topic " + topic + " partition "
                            + partition + ": " + e, e);
        }
    }

    /**
     * Creates the state topic with {@code partitions} partitions unless it exists, and returns how
     * many partitions it has. Replication factor min(3, upstream brokers), {@code min.insync.replicas}
     * min(2, that): a state record is acknowledged once two replicas hold it. Retention is
     * unlimited and the cleanup policy is delete, as for Kafka's own share-group state topic: the
     * start moves only by {@link #moveStart} (DeleteRecords), once every key has a full record
     * after it. A compacted topic would not do: compaction keeps only the latest record of each
     * key, but a key's state is its last snapshot plus the updates after it, which have keys of
     * their own, so compaction could drop updates still needed, or keep an update whose snapshot
     * it dropped.
     *
     * @throws IOException if the topic cannot be created or described, or exists compacted
     */
    public static int createTopicIfMissing(Map<String, Object> upstreamClientConfig, String topic, int partitions,
            Duration timeout) throws IOException {
        try (Admin admin = Admin.create(Map.copyOf(upstreamClientConfig))) {
            int brokers = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS).size();
            short replicas = (short) Math.max(1, Math.min(3, brokers));
            NewTopic newTopic = new NewTopic(topic, partitions, replicas).configs(Map.of(
                    TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
                    TopicConfig.RETENTION_MS_CONFIG, "-1",
                    TopicConfig.RETENTION_BYTES_CONFIG, "-1",
                    TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, String.valueOf(Math.min(2, replicas))));
            try {
                admin.createTopics(List.of(newTopic)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                return partitions;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(resource);
            ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
            if (policy != null && policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
                throw new IOException("upstream topic " + topic + " has cleanup.policy=" + policy.value()
                        + "; the share state needs delete (compaction would drop records still needed)");
            }
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(topic);
            return description.partitions().size();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw new IOException("cannot create the share-state topic " + topic + " on the upstream: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted creating the share-state topic " + topic, e);
        }
    }

    @Override
    public long append(List<Entry> entries) throws IOException {
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("nothing to append");
        }
        checkWritable();
        // Committed only with every send flushed: the marker then follows them, where the offsets
        // of the sends to come are predicted.
        if (transactionBeganNanos >= 0 && sends.isEmpty()
                && System.nanoTime() - transactionBeganNanos >= TimeUnit.MILLISECONDS.toNanos(commitIntervalMs)) {
            commit();
        }
        long first = end;
        try {
            if (transactionBeganNanos < 0) {
                producer.beginTransaction();
                transactionBeganNanos = System.nanoTime();
            }
            for (Entry e : entries) {
                sends.add(producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), e.key(),
                        e.value())));
            }
        } catch (RuntimeException e) {
            throw fail("appending to", e);
        }
        end += entries.size();
        return first;
    }

    /**
     * Returns once the upstream acknowledged every record sent ({@code acks=all}: replicated, so
     * durable). With nothing sent since the last flush, commits the open transaction instead (a
     * sync: see {@link #syncWithinMs}).
     */
    @Override
    public void flush() throws IOException {
        checkWritable();
        if (!sends.isEmpty()) {
            awaitAcknowledged();
        } else if (transactionBeganNanos >= 0) {
            commit();
        }
    }

    /**
     * After a flush that left the transaction open: a flush with nothing new commits it within a
     * commit interval, before {@code transaction.timeout.ms} would have the upstream abort it.
     */
    @Override
    public long syncWithinMs() {
        return transactionBeganNanos >= 0 ? commitIntervalMs : Long.MAX_VALUE;
    }

    /** A commit interval for {@code transactionTimeoutMs}: well inside it, at most a second. */
    static long commitIntervalMs(long transactionTimeoutMs) {
        return Math.max(1, Math.min(MAX_COMMIT_INTERVAL_MS, transactionTimeoutMs / 4));
    }

    private void awaitAcknowledged() throws IOException {
        try {
            // Sends at once, and returns when each send is acknowledged or has failed, within
            // delivery.timeout.ms (the log's timeout).
            producer.flush();
        } catch (RuntimeException e) {
            throw fail("flushing to", e);
        }
        for (int i = 0; i < sends.size(); i++) {
            long actual;
            try {
                actual = sends.get(i).get(0, TimeUnit.MILLISECONDS).offset();
            } catch (ExecutionException | TimeoutException e) {
                throw fail("writing to", e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw fail("writing to", e);
            }
            long expected = durableEnd + i;
            if (actual != expected) {
                throw fail("checking the offsets of", new IOException("a record expected at offset " + expected
                        + " was written at offset " + actual + ": something else writes to " + name()));
            }
        }
        durableEnd = end;
        sends.clear();
    }

    private void commit() throws IOException {
        try {
            producer.commitTransaction();
        } catch (RuntimeException e) {
            throw fail("committing to", e);
        }
        transactionBeganNanos = -1;
        // The commit marker follows the last record.
        end++;
        durableEnd = end;
    }

    /**
     * Visits the records from the upstream log start to its end, committed or not (see the class
     * comment: acknowledged is durable). Commits this log's own open transaction first, then waits
     * until no transaction is open on the partition: the abort of a fenced writer's transaction
     * (started by {@link #open}) and the marker of a commit reach the partition after the
     * transaction coordinator answered.
     *
     * @throws IllegalStateException with records appended and not flushed
     */
    @Override
    public void replay(Visitor visitor) throws IOException {
        checkWritable();
        if (!sends.isEmpty()) {
            throw new IllegalStateException("replay of " + name() + " with records appended and not flushed");
        }
        if (transactionBeganNanos >= 0) {
            commit();
        }
        long logEnd = awaitNoOpenTransaction();
        long from = offset(OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
        Map<String, Object> consumerConfig = new HashMap<>(clientConfig);
        consumerConfig.put("isolation.level", "read_uncommitted");
        consumerConfig.put("enable.auto.commit", false);
        consumerConfig.put("auto.offset.reset", "none");
        consumerConfig.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerConfig.put("value.deserializer", ByteArrayDeserializer.class.getName());
        consumerConfig.remove("group.id");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig)) {
            consumer.assign(Set.of(partition));
            consumer.seek(partition, from);
            long position = from;
            long stalledSince = System.nanoTime();
            while (position < logEnd) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL).records(partition)) {
                    if (r.key() == null) {
                        throw new IOException("a record without a key at offset " + r.offset() + " of " + name());
                    }
                    if (r.offset() < logEnd) {
                        visitor.onRecord(r.offset(), ByteBuffer.wrap(r.key()),
                                r.value() == null ? null : ByteBuffer.wrap(r.value()));
                    }
                }
                // Past control markers too, which poll does not return.
                long now = consumer.position(partition, timeout);
                if (now > position) {
                    position = now;
                    stalledSince = System.nanoTime();
                } else if (System.nanoTime() - stalledSince > timeout.toNanos()) {
                    throw new IOException("replay of " + name() + " made no progress at offset " + position
                            + " in " + timeout + " (log end " + logEnd + ")");
                }
            }
        } catch (RuntimeException e) {
            throw new IOException("replay of " + name() + " failed: " + e, e);
        }
    }

    @Override
    public long startOffset() {
        return start;
    }

    @Override
    public long endOffset() {
        return end;
    }

    @Override
    public boolean reclaimable() {
        return start < durableEnd;
    }

    /**
     * Deletes the records below {@code offset} on the upstream (DeleteRecords moves the
     * partition's log start durably; the upstream frees whole segments below it on its own).
     */
    @Override
    public void moveStart(long offset) throws IOException {
        checkWritable();
        if (offset > durableEnd) {
            throw new IllegalArgumentException("cannot move the start of " + name() + " to " + offset
                    + ", beyond its durable end " + durableEnd);
        }
        if (offset <= start) {
            return;
        }
        try {
            // The durable end counts the last commit's marker, which may still be on its way:
            // DeleteRecords refuses an offset above the partition's high watermark.
            awaitLogEnd(offset);
            start = admin.deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(offset))).lowWatermarks()
                    .get(partition).get(timeout.toMillis(), TimeUnit.MILLISECONDS).lowWatermark();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw fail("moving the start of", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fail("moving the start of", e);
        }
    }

    @Override
    public String name() {
        return "upstream topic " + partition.topic() + " partition " + partition.partition();
    }

    /** Commits what was appended (unless the log failed), then closes the clients. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (failure == null && transactionBeganNanos >= 0) {
                flush();
                if (transactionBeganNanos >= 0) {
                    commit();
                }
            }
        } catch (IOException e) {
            LOG.warn("Committing the last share-state records to {} on close failed", name(), e);
        } finally {
            closed = true;
            producer.close(timeout);
            admin.close(timeout);
        }
    }

    // ---------------------------------------------------------------- internals

    private void checkWritable() throws IOException {
        if (closed) {
            throw new IOException(name() + " is closed");
        }
        if (failure != null) {
            String message = name() + " failed earlier; nothing more is written";
            throw lost(failure) ? new LostException(message, failure) : new IOException(message, failure);
        }
    }

    /** Records {@code cause} as the log's failure and returns the IOException to throw. */
    private IOException fail(String doing, Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        if (lost(cause)) {
            return new LostException(doing + " " + name() + " failed: the upstream ended this log's writes ("
                    + cause + "); another writer took it over, or the open transaction ran out", cause);
        }
        return new IOException(doing + " " + name() + " failed: " + cause, cause);
    }

    /**
     * Whether {@code cause} says this writer's transactions are over, or may be: another writer
     * opened the partition with this log's transactional id (a write after that is refused as
     * fenced or of a stale epoch), the transaction coordinator aborted the open transaction after
     * {@code transaction.timeout.ms} (its commit is then refused as INVALID_TXN_STATE, or as
     * fenced: the abort bumped the epoch), or the upstream did not answer within the log's timeout
     * (a network partition: the gateway group drops this node meanwhile and another takes the
     * partition over, fencing this writer). What this log flushed before is durable; what it did
     * not flush may or may not be, and the partition's next writer, replaying it, is the one to
     * know. Either way the state partition is served again from what the upstream holds, never
     * from this log's memory.
     */
    private static boolean lost(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException
                    || t instanceof InvalidTxnStateException
                    || t instanceof org.apache.kafka.common.errors.TimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The log failed because the upstream ended its writes, or did not answer in time ({@link
     * #lost}): what was flushed stands, the rest may or may not, as the next writer's replay
     * finds. On a gateway the node gives the state partition up and takes its
     * durable state again (or another node does) instead of stopping: a node cut off from its
     * upstream comes back when the link does.
     */
    public static final class LostException extends IOException {
        private static final long serialVersionUID = 1L;

        LostException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Waits until the partition's last stable offset reaches its end (no transaction open on it)
     * and returns that end.
     */
    private long awaitNoOpenTransaction() throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long logEnd = offset(OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
            long stable = offset(OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            if (stable == logEnd) {
                return logEnd;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("a transaction stayed open on " + name() + " for " + timeout
                        + ": last stable offset " + stable + ", log end " + logEnd);
            }
            pause();
        }
    }

    /** Waits until the partition's end (its high watermark) reaches {@code offset}. */
    private void awaitLogEnd(long offset) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long logEnd;
        while ((logEnd = offset(OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED)) < offset) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the end of " + name() + " stayed at " + logEnd + " below " + offset
                        + " for " + timeout);
            }
            pause();
        }
    }

    /** An offset of the partition from the upstream: its start, end or last stable offset. */
    private long offset(OffsetSpec spec, IsolationLevel isolation) throws IOException {
        try {
            return admin.listOffsets(Map.of(partition, spec), new ListOffsetsOptions(isolation))
                    .partitionResult(partition).get(timeout.toMillis(), TimeUnit.MILLISECONDS).offset();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw new IOException("cannot read the offsets of " + name() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading the offsets of " + name(), e);
        }
    }

    private void pause() throws IOException {
        try {
            Thread.sleep(RECHECK_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting on " + name(), e);
        }
    }
}
