package io.pier.dlq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Moves the dead letters of share groups (KIP-1191) back to the topics their records came from,
 * once whatever made them die is fixed. Only the public Kafka clients (Admin, KafkaConsumer, a
 * transactional KafkaProducer), so it runs against any broker that writes KIP-1191 letters.
 *
 * <p>For each letter, in the order of each dead-letter topic-partition: the record is rebuilt from
 * the copy the letter carries ({@code errors.deadletterqueue.copy.record.enable=true}: key, value
 * and original headers), else read back from the source topic-partition at {@code
 * __dlq.errors.offset} while the log still holds it; then produced to the source topic and
 * partition (or to {@code toTopic}: the same partition number if it has it, else the partitioner's
 * choice by key), with the original key, value and headers (the {@code __dlq.errors.*} ones
 * dropped) and, when read from the source, its original timestamp. A letter whose record cannot be
 * rebuilt is reported ({@link RedriveOutcome.Status#FAILED}) and passed over.
 *
 * <p>Exactly once: progress is kept per (dead-letter topic, partition, group) as the next
 * dead-letter offset to look at, in a compacted progress topic ({@value #DEFAULT_PROGRESS_TOPIC}),
 * written in the same transaction as the records it moves and read back read_committed after the
 * producer's {@code initTransactions}, which aborts whatever a crashed run (same transactional id)
 * left open. A letter below its group's progress is never moved again, whatever the filters of a
 * later run; a crash moves nothing twice. Consumers of the source topic see the redriven records
 * exactly once when they read committed records only ({@code share.isolation.level=read_committed}
 * for a share group); with read_uncommitted they may also see the records of a transaction a crash
 * left open.
 */
public final class DeadLetterRedrive {
    /** Where progress is kept unless told otherwise. */
    public static final String DEFAULT_PROGRESS_TOPIC = "pier.dlq.redrive.progress";
    /** The default transactional id is this followed by the dead-letter topic's name. */
    public static final String TRANSACTIONAL_ID_PREFIX = "pier-dlq-redrive-";

    private final String bootstrapServers;
    private final Properties clientProperties;
    private final String dlqTopic;
    private final String group;
    private final String toTopic;
    private final long maxRecords;
    private final boolean dryRun;
    private final RedriveListener listener;
    private final RedriveProgress progressStore;
    private final String transactionalId;
    private final int lettersPerTransaction;
    private final Duration timeout;

    private DeadLetterRedrive(Builder b) {
        this.bootstrapServers = b.bootstrapServers;
        this.clientProperties = b.clientProperties;
        this.dlqTopic = b.dlqTopic;
        this.group = b.group;
        this.toTopic = b.toTopic;
        this.maxRecords = b.maxRecords;
        this.dryRun = b.dryRun;
        this.listener = b.listener;
        this.progressStore = new RedriveProgress(b.progressTopic, b.dlqTopic, b.timeout);
        this.transactionalId = b.transactionalId != null ? b.transactionalId : TRANSACTIONAL_ID_PREFIX + b.dlqTopic;
        this.lettersPerTransaction = b.lettersPerTransaction;
        this.timeout = b.timeout;
    }

    /** A redrive of {@code dlqTopic} through the brokers at {@code bootstrapServers} (host:port,...). */
    public static Builder builder(String bootstrapServers, String dlqTopic) {
        return new Builder(bootstrapServers, dlqTopic);
    }

    /** The options of a redrive; only the bootstrap servers and the dead-letter topic are needed. */
    public static final class Builder {
        private final String bootstrapServers;
        private final String dlqTopic;
        private final Properties clientProperties = new Properties();
        private String group;
        private String toTopic;
        private long maxRecords = Long.MAX_VALUE;
        private boolean dryRun;
        private RedriveListener listener = new RedriveListener() {};
        private String progressTopic = DEFAULT_PROGRESS_TOPIC;
        private String transactionalId;
        private int lettersPerTransaction = 500;
        private Duration timeout = Duration.ofSeconds(30);

        private Builder(String bootstrapServers, String dlqTopic) {
            this.bootstrapServers = requireText(bootstrapServers, "bootstrap servers");
            this.dlqTopic = requireText(dlqTopic, "dead-letter topic");
        }

        /** Extra Kafka client settings for every client the redrive opens (security, timeouts...). */
        public Builder clientProperties(Map<?, ?> properties) {
            clientProperties.putAll(properties);
            return this;
        }

        /** Only the letters of this share group; those of others are left for another run. */
        public Builder group(String group) {
            this.group = group == null ? null : requireText(group, "group");
            return this;
        }

        /** Produces to this topic instead of each record's source topic. */
        public Builder toTopic(String toTopic) {
            this.toTopic = toTopic == null ? null : requireText(toTopic, "target topic");
            return this;
        }

        /** Moves at most this many letters (in a dry run: lists at most this many). */
        public Builder maxRecords(long max) {
            if (max < 1) {
                throw new IllegalArgumentException("max records must be at least 1, got " + max);
            }
            this.maxRecords = max;
            return this;
        }

        /** Writes nothing; reports what would move. */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        public Builder listener(RedriveListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** Where progress is kept (created, compacted, when missing); default {@value #DEFAULT_PROGRESS_TOPIC}. */
        public Builder progressTopic(String progressTopic) {
            this.progressTopic = requireText(progressTopic, "progress topic");
            return this;
        }

        /**
         * The producer's transactional id; default {@value #TRANSACTIONAL_ID_PREFIX} and the
         * dead-letter topic. Two runs with the same id cannot both write: the later one fences the
         * earlier, which stops.
         */
        public Builder transactionalId(String transactionalId) {
            this.transactionalId = requireText(transactionalId, "transactional id");
            return this;
        }

        /** Letters per transaction, at most; default 500. */
        public Builder lettersPerTransaction(int letters) {
            if (letters < 1) {
                throw new IllegalArgumentException("letters per transaction must be at least 1, got " + letters);
            }
            this.lettersPerTransaction = letters;
            return this;
        }

        /** How long to wait for any one answer from the brokers; default 30 s. */
        public Builder timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive");
            }
            this.timeout = timeout;
            return this;
        }

        public DeadLetterRedrive build() {
            if (dlqTopic.equals(toTopic)) {
                throw new IllegalArgumentException("the target topic cannot be the dead-letter topic " + dlqTopic);
            }
            if (progressTopic.equals(toTopic) || progressTopic.equals(dlqTopic)) {
                throw new IllegalArgumentException("the progress topic " + progressTopic
                        + " cannot be the dead-letter or the target topic");
            }
            return new DeadLetterRedrive(this);
        }

        private static String requireText(String s, String what) {
            if (s == null || s.isBlank()) {
                throw new IllegalArgumentException(what + " must not be empty");
            }
            return s.strip();
        }
    }

    /**
     * Runs the redrive to the end of the dead-letter topic as it is now (or to the maximum).
     *
     * @throws RedriveException when it cannot go on (topic missing, no answer, fenced, commit failed);
     *     what it reported moved before stays moved
     */
    public RedriveResult run() {
        Properties base = new Properties();
        base.putAll(clientProperties);
        base.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        base.remove(ConsumerConfig.GROUP_ID_CONFIG);
        Properties adminProps = new Properties();
        adminProps.putAll(base);
        adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        try (Admin admin = Admin.create(adminProps)) {
            Topics topics = new Topics(admin, timeout);
            int dlqPartitions = topics.partitions(dlqTopic);
            if (dlqPartitions < 0) {
                throw new RedriveException("the dead-letter topic " + dlqTopic + " does not exist");
            }
            int toPartitions = -1;
            if (toTopic != null) {
                toPartitions = topics.partitions(toTopic);
                if (toPartitions < 0) {
                    throw new RedriveException("the target topic " + toTopic + " does not exist");
                }
            }
            KafkaProducer<byte[], byte[]> producer = null;
            try {
                if (!dryRun) {
                    progressStore.ensureTopic(admin, topics);
                    producer = producer(base);
                    // Aborts what a crashed run with this id left open, and fences it if it still runs.
                    producer.initTransactions();
                }
                Map<String, Long> progress = progressStore.read(admin, topics, base);
                try (KafkaConsumer<byte[], byte[]> letters = letterConsumer(base);
                        SourceReader sources = new SourceReader(base, topics, timeout)) {
                    return new Pass(topics, producer, progress, letters, sources, dlqPartitions, toPartitions).run();
                }
            } catch (KafkaException e) {
                throw new RedriveException("redrive of " + dlqTopic + " failed: " + e.getMessage(), e);
            } finally {
                if (producer != null) {
                    producer.close(Duration.ofSeconds(5));
                }
            }
        } catch (KafkaException e) {
            throw new RedriveException("cannot create a client for " + bootstrapServers + ": " + e.getMessage(), e);
        }
    }

    /** One run over the dead-letter topic. */
    private final class Pass {
        private final Topics topics;
        private final KafkaProducer<byte[], byte[]> producer;
        /** "partition:group" -> next dead-letter offset to look at, as committed. */
        private final Map<String, Long> progress;
        private final KafkaConsumer<byte[], byte[]> letters;
        private final SourceReader sources;
        private final int dlqPartitions;
        private final int toPartitions;
        private long moved;
        private long skippedOtherGroup;
        private long skippedAlreadyMoved;
        private long failed;
        private final List<RedriveOutcome> failures = new ArrayList<>();
        private long scanned;
        private long total;

        Pass(Topics topics, KafkaProducer<byte[], byte[]> producer, Map<String, Long> progress,
                KafkaConsumer<byte[], byte[]> letters, SourceReader sources, int dlqPartitions, int toPartitions) {
            this.topics = topics;
            this.producer = producer;
            this.progress = progress;
            this.letters = letters;
            this.sources = sources;
            this.dlqPartitions = dlqPartitions;
            this.toPartitions = toPartitions;
        }

        RedriveResult run() {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < dlqPartitions; p++) {
                partitions.add(new TopicPartition(dlqTopic, p));
            }
            Map<TopicPartition, Long> begin = letters.beginningOffsets(partitions, timeout);
            Map<TopicPartition, Long> end = letters.endOffsets(partitions, timeout);
            Map<TopicPartition, Long> start = new LinkedHashMap<>();
            for (TopicPartition tp : partitions) {
                long from = begin.get(tp);
                if (group != null) {
                    from = Math.max(from, progress.getOrDefault(RedriveProgress.key(tp.partition(), group), 0L));
                }
                start.put(tp, from);
                total += Math.max(0, end.get(tp) - from);
            }
            listener.started(total);
            boolean stoppedAtMax = false;
            for (TopicPartition tp : partitions) {
                if (stoppedAtMax) {
                    break;
                }
                long last = end.get(tp);
                if (start.get(tp) >= last) {
                    continue;
                }
                letters.assign(List.of(tp));
                letters.seek(tp, start.get(tp));
                long idleSince = System.nanoTime();
                while (!stoppedAtMax && letters.position(tp, timeout) < last) {
                    List<ConsumerRecord<byte[], byte[]>> got = letters.poll(Duration.ofMillis(200)).records(tp);
                    if (got.isEmpty()) {
                        if (System.nanoTime() - idleSince > timeout.toNanos()) {
                            throw new RedriveException("no letters could be read from " + tp + " at offset "
                                    + letters.position(tp, timeout) + " within " + timeout.toMillis() + " ms");
                        }
                        continue;
                    }
                    idleSince = System.nanoTime();
                    Chunk chunk = new Chunk();
                    for (ConsumerRecord<byte[], byte[]> r : got) {
                        if (r.offset() >= last) {
                            break;
                        }
                        handle(tp, r, chunk);
                        scanned++;
                        if (moved + chunk.records.size() >= maxRecords) {
                            stoppedAtMax = true;
                            break;
                        }
                        if (chunk.outcomes.size() >= lettersPerTransaction) {
                            commit(chunk);
                            chunk = new Chunk();
                        }
                    }
                    commit(chunk);
                }
            }
            return new RedriveResult(dryRun, moved, skippedOtherGroup, skippedAlreadyMoved, failed, failures,
                    stoppedAtMax && scanned < total);
        }

        private void handle(TopicPartition dlq, ConsumerRecord<byte[], byte[]> r, Chunk chunk) {
            DeadLetter l = DeadLetter.of(r);
            if (group != null && !group.equals(l.group())) {
                chunk.outcomes.add(outcome(RedriveOutcome.Status.SKIPPED_OTHER_GROUP, l, false, null, -1, null));
                return;
            }
            String key = RedriveProgress.key(dlq.partition(), l.group() == null ? "" : l.group());
            long next = chunk.progress.getOrDefault(key, progress.getOrDefault(key, 0L));
            if (r.offset() < next) {
                chunk.outcomes.add(outcome(RedriveOutcome.Status.SKIPPED_ALREADY_MOVED, l, false, null, -1, null));
                return;
            }
            chunk.progress.put(key, r.offset() + 1);
            if (l.problem() != null) {
                chunk.outcomes.add(outcome(RedriveOutcome.Status.FAILED, l, false, null, -1, l.problem()));
                return;
            }
            TopicPartition source = l.source();
            String target = toTopic != null ? toTopic : source.topic();
            int partition;
            if (toTopic != null) {
                partition = source.partition() < toPartitions ? source.partition() : -1;
            } else {
                int n = topics.partitions(source.topic());
                if (n < 0 || source.partition() >= n) {
                    chunk.outcomes.add(outcome(RedriveOutcome.Status.FAILED, l, false, null, -1, n < 0
                            ? "the source topic " + source.topic() + " no longer exists"
                            : "the source partition " + source + " no longer exists (the topic has " + n + ")"));
                    return;
                }
                partition = source.partition();
            }
            byte[] key0;
            byte[] value;
            List<Header> headers = new ArrayList<>();
            Long timestamp = null;
            boolean fromCopy = l.hasCopy();
            if (fromCopy) {
                key0 = r.key();
                value = r.value();
                headers.addAll(l.originalHeaders());
            } else {
                ConsumerRecord<byte[], byte[]> original;
                try {
                    original = sources.read(source, l.sourceOffset());
                } catch (SourceReader.Missing e) {
                    chunk.outcomes.add(outcome(RedriveOutcome.Status.FAILED, l, false, null, -1, e.getMessage()));
                    return;
                }
                key0 = original.key();
                value = original.value();
                for (Header h : original.headers()) {
                    if (!h.key().startsWith(DeadLetter.PREFIX)) {
                        headers.add(h);
                    }
                }
                timestamp = original.timestamp() >= 0 ? original.timestamp() : null;
            }
            chunk.records.add(new ProducerRecord<>(target, partition < 0 ? null : partition, timestamp, key0, value,
                    headers));
            chunk.recordOutcome.add(chunk.outcomes.size());
            chunk.outcomes.add(outcome(dryRun ? RedriveOutcome.Status.WOULD_MOVE : RedriveOutcome.Status.MOVED, l,
                    fromCopy, target, partition, null));
        }

        private void commit(Chunk chunk) {
            if (chunk.outcomes.isEmpty()) {
                return;
            }
            if (!dryRun && (!chunk.records.isEmpty() || !chunk.progress.isEmpty())) {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                try {
                    producer.beginTransaction();
                    for (ProducerRecord<byte[], byte[]> r : chunk.records) {
                        sent.add(producer.send(r));
                    }
                    List<Future<RecordMetadata>> marks = new ArrayList<>();
                    for (Map.Entry<String, Long> e : chunk.progress.entrySet()) {
                        marks.add(producer.send(progressStore.mark(e.getKey(), e.getValue())));
                    }
                    producer.commitTransaction(); // fails if any of the sends above failed
                    for (int i = 0; i < sent.size(); i++) {
                        RecordMetadata m = sent.get(i).get();
                        int at = chunk.recordOutcome.get(i);
                        RedriveOutcome o = chunk.outcomes.get(at);
                        chunk.outcomes.set(at, new RedriveOutcome(o.status(), o.letter(), o.letterOffset(), o.group(),
                                o.source(), o.sourceOffset(), o.fromCopy(), m.topic(), m.partition(), m.offset(), null));
                    }
                    for (Future<RecordMetadata> m : marks) {
                        m.get();
                    }
                } catch (ProducerFencedException | InvalidProducerEpochException e) {
                    throw new RedriveException("another redrive with transactional id " + transactionalId
                            + " took over; this one stops (the " + chunk.records.size()
                            + " letters of its open transaction were not moved by it)", e);
                } catch (KafkaException e) {
                    abortQuietly();
                    throw new RedriveException("could not move the " + chunk.records.size() + " letters of a "
                            + "transaction (none of them moved; run again): " + e.getMessage(), e);
                } catch (ExecutionException e) {
                    throw new RedriveException("committed, but a send reported " + e.getCause(), e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RedriveException("interrupted", e);
                }
                progress.putAll(chunk.progress);
            }
            for (RedriveOutcome o : chunk.outcomes) {
                switch (o.status()) {
                    case MOVED, WOULD_MOVE -> moved++;
                    case SKIPPED_OTHER_GROUP -> skippedOtherGroup++;
                    case SKIPPED_ALREADY_MOVED -> skippedAlreadyMoved++;
                    case FAILED -> {
                        failed++;
                        failures.add(o);
                    }
                }
                listener.outcome(o);
            }
            listener.progress(scanned, total);
        }

        private void abortQuietly() {
            try {
                producer.abortTransaction();
            } catch (KafkaException ignored) {
                // the transaction times out on the broker instead; a later run's initTransactions aborts it
            }
        }

        private RedriveOutcome outcome(RedriveOutcome.Status status, DeadLetter l, boolean fromCopy, String target,
                int partition, String error) {
            return new RedriveOutcome(status, new TopicPartition(l.record().topic(), l.record().partition()),
                    l.record().offset(), l.group(), l.source(), l.sourceOffset(), fromCopy, target, partition, -1, error);
        }
    }

    /** The letters of one transaction: the records to produce, every letter's outcome, the progress past them. */
    private static final class Chunk {
        final List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        /** For each record, the index of its outcome. */
        final List<Integer> recordOutcome = new ArrayList<>();
        final List<RedriveOutcome> outcomes = new ArrayList<>();
        final Map<String, Long> progress = new LinkedHashMap<>();
    }

    private KafkaProducer<byte[], byte[]> producer(Properties base) {
        Properties p = new Properties();
        p.putAll(base);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) timeout.toMillis());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "pier-dlq-redrive");
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private KafkaConsumer<byte[], byte[]> letterConsumer(Properties base) {
        Properties p = new Properties();
        p.putAll(base);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.max(lettersPerTransaction, 1));
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "pier-dlq-redrive-letters");
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
