package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.GroupConfig;
import io.pier.log.LogConfig;
import io.pier.share.DeadLetterBatch;
import io.pier.share.SharePartition;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the dead letters of share groups with a dead-letter queue (KIP-1191): each ARCHIVING
 * record gets exactly one record in the group's {@code errors.deadletterqueue.topic.name}, and
 * becomes ARCHIVED only once that is durable.
 *
 * <pre>
 *   ARCHIVING --take--&gt; persist ARCHIVING --&gt; read the originals --&gt; append the letters to the
 *        DLQ (durable) --&gt; persist ARCHIVED --&gt; commit on the shard: the start offset moves on
 * </pre>
 *
 * <p>A REJECT is ARCHIVING on disk before its client hears of it, but a record whose lock expired,
 * or that a fetch found over a lowered limit, dies in memory first; so every batch makes its
 * records' ARCHIVING durable before any letter of theirs can be in the queue.
 *
 * <p><b>Exactly one letter.</b> Each share-partition has at most one batch of letters in flight,
 * appended (as record batches of at most {@link #CHUNK_BYTES}, one after the other) to one
 * partition of the queue: the source partition's number, modulo the queue's partitions. A letter
 * is in the queue but its record not yet ARCHIVED only for records still ARCHIVING, and every
 * batch of the share-partition written before those was recorded ARCHIVED. So once after each
 * load, when records were loaded ARCHIVING, the share-partition's trailing record batches in that
 * partition whose letters all belong to such records are looked up (reading backwards from the
 * end, up to the first batch holding any other letter), and those letters are not written again;
 * nor are letters appended before an ARCHIVED write that failed (the records stay ARCHIVING and
 * are taken again). After several crashes in a row the trailing batches span them all. A queue
 * whose failed appends may have landed all the same (a gateway's, on the upstream: {@link
 * DeadLetterQueues#mayLandAfterFailure}) has the failed batch's letters looked up the same way
 * before its records are taken again.
 *
 * <p><b>Never archived without the letter for a passing reason.</b> When the queue cannot be
 * written for good (no such topic, not enabled for groups, a letter the queue refuses as too large
 * or invalid), the records are archived anyway, as in Kafka; the failure is counted and logged once
 * per cause. When it fails for a reason that passes (an error a Kafka client would retry on, such
 * as NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR or UNKNOWN_TOPIC_OR_PARTITION while a partition
 * opens, or the originals cannot be read), nothing is archived: the records stay ARCHIVING and the
 * batch is tried again after a backoff ({@link #RETRY_INITIAL_MS} doubling to {@link
 * #RETRY_MAX_MS}, Kafka's client retry defaults), its target decided anew; a queue deleted
 * meanwhile is then a failure for good. Letters appended before the failure are not appended again.
 * A storage error also stops the broker: the records are then ARCHIVING on disk, and the restart
 * writes their letters.
 */
final class DeadLetters {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);
    /** Letters one batch carries at most. */
    private static final int MAX_LETTERS = 500;
    /** Letters per record batch appended, at most about this many bytes (at least one letter). */
    private static final long CHUNK_BYTES = 512 * 1024;
    /** How long to wait before looking again for a queue topic being created. */
    private static final long CREATE_RETRY_MS = 200;
    /** The first wait before a batch whose letters failed for a passing reason is tried again. */
    static final long RETRY_INITIAL_MS = 100;
    /** The longest such wait. */
    static final long RETRY_MAX_MS = 1_000;

    private final ShareGroups groups;
    private final SharePersister persister;
    private final SharePartitions live;
    /** The broker's own topics, or (set while wiring) a gateway's upstream ones. */
    private volatile DeadLetterQueues queues;
    private final Clock clock;
    private final int autoCreatePartitions;
    private final Set<String> loggedCauses = ConcurrentHashMap.newKeySet();
    private final Set<String> creating = ConcurrentHashMap.newKeySet();

    /**
     * @param clock the wall clock that stamps the letters
     * @param autoCreatePartitions partitions of a queue topic created on demand ({@code num.partitions})
     */
    DeadLetters(ShareGroups groups, SharePersister persister, SharePartitions live, DeadLetterQueues queues,
            Clock clock, int autoCreatePartitions) {
        this.groups = groups;
        this.persister = persister;
        this.live = live;
        this.queues = queues;
        this.clock = clock;
        this.autoCreatePartitions = autoCreatePartitions;
    }

    /** Where the letters go from now on: a gateway's upstream topics. Call while wiring. */
    void queues(DeadLetterQueues queues) {
        this.queues = queues;
    }

    /** Where one share-partition's letters go: a partition of the queue, or why there is none. */
    private record Target(TopicPartition source, TopicPartition queue, String unavailable, boolean retryLater) {
        static Target to(TopicPartition source, TopicPartition queue) {
            return new Target(source, queue, null, false);
        }

        static Target none(TopicPartition source, String why) {
            return new Target(source, null, why, false);
        }

        static Target later(TopicPartition source) {
            return new Target(source, null, null, true);
        }
    }

    /**
     * What one shard knows of one live share-partition's letters: which are in the queue but not
     * yet recorded ARCHIVED (found there after a restart, or appended before a failed ARCHIVED
     * write), and whether that was looked up since the share-partition was loaded.
     */
    private static final class Lettered {
        final SharePartition sp;
        final Set<String> inQueue = new HashSet<>();
        /** The queue partition the lookup read, null before it; it is redone if the queue changes. */
        TopicPartition lookedUp;
        /**
         * Letters of a batch whose append failed but may have landed all the same ({@link
         * DeadLetterQueues#mayLandAfterFailure}): looked up before the records are taken again.
         */
        final Set<String> recheck = new HashSet<>();
        boolean lookingUp;
        DeadLetterBatch inFlight;
        /** Batches in a row whose letters failed for a passing reason; 0 after one is written. */
        int failures;
        /** Not taken again before this time (monotonic ms), after such a failure. */
        long notBeforeMs;

        Lettered(SharePartition sp) {
            this.sp = sp;
        }
    }

    /** The duty step that writes the dead letters of the share-partitions {@code shard} owns. */
    DutyStep step(Shard shard) {
        return new DutyStep() {
            /** By share-partition key; only this shard touches it. */
            private final Map<SharePartitionKey, Lettered> known = new HashMap<>();
            private long retryAtMs = Long.MAX_VALUE;

            @Override
            public int onCycle(long nowMs) {
                if (nowMs >= retryAtMs) {
                    retryAtMs = Long.MAX_VALUE;
                }
                int[] taken = {0};
                live.forEachLoaded(shard, (partition, sp) -> {
                    if (sp.deadLettersWaiting() == 0) {
                        return;
                    }
                    Lettered l = known.get(sp.key());
                    if (l == null || l.sp != sp) { // first seen, or loaded again: what it knew is stale
                        l = new Lettered(sp);
                        known.put(sp.key(), l);
                    }
                    if (l.inFlight != null || l.lookingUp) {
                        return;
                    }
                    if (nowMs < l.notBeforeMs) {
                        retryAtMs = Math.min(retryAtMs, l.notBeforeMs);
                        return;
                    }
                    Target target = target(sp.key().groupId(), partition.topicPartition());
                    if (target.retryLater()) {
                        retryAtMs = Math.min(retryAtMs, nowMs + CREATE_RETRY_MS);
                        return;
                    }
                    if (target.queue() != null && (!target.queue().equals(l.lookedUp) || !l.recheck.isEmpty())
                            && lookUp(shard, sp, l, target)) {
                        return;
                    }
                    Lettered lettered = l;
                    sp.takeDeadLetters(MAX_LETTERS).ifPresent(batch -> {
                        taken[0]++;
                        lettered.inFlight = batch;
                        // ARCHIVING durable first (see DeadLetterBatch.dying), then the letters, then ARCHIVED.
                        var unused = persister.write(batch.dying())
                                .thenCompose(v -> write(partition, sp, batch, target, lettered.inQueue))
                                .thenCompose(written -> persister.write(batch.change().write().orElseThrow())
                                        .thenApply(v -> written))
                                .whenComplete((written, failure) -> shard.execute(() -> {
                                    lettered.inFlight = null;
                                    if (failure == null) {
                                        // The records are ARCHIVED now: their letters' ids go with them.
                                        batch.letters().forEach(x -> lettered.inQueue.remove(DeadLetterRecords.idOf(x)));
                                        sp.commitDeadLetters(batch, written);
                                        if (lettered.failures > 0) {
                                            LOG.info("The dead letters of {} are written, after {} failed tries",
                                                    sp.key(), lettered.failures);
                                        }
                                        lettered.failures = 0;
                                    } else {
                                        // The letters appended stay in inQueue: taken again, they are not
                                        // appended a second time; those that may have landed unseen are
                                        // looked up first.
                                        if (queues.mayLandAfterFailure()) {
                                            batch.letters().forEach(x -> {
                                                String id = DeadLetterRecords.idOf(x);
                                                if (!lettered.inQueue.contains(id)) {
                                                    lettered.recheck.add(id);
                                                }
                                            });
                                        }
                                        sp.rollback(batch.change());
                                        retryLater(shard, sp, lettered, failure);
                                    }
                                    live.wakeIfAcquirable(partition, sp);
                                }));
                    });
                });
                known.entrySet().removeIf(e -> e.getValue().inFlight == null && !e.getValue().lookingUp
                        && e.getValue().sp.deadLettersWaiting() == 0);
                return taken[0];
            }

            /** After a failed batch: its records stay ARCHIVING, taken again after a backoff. */
            private void retryLater(Shard shard, SharePartition sp, Lettered l, Throwable failure) {
                l.failures++;
                long backoff = RETRY_INITIAL_MS << Math.min(l.failures - 1, 10);
                l.notBeforeMs = shard.nowMs() + Math.min(backoff, RETRY_MAX_MS);
                retryAtMs = Math.min(retryAtMs, l.notBeforeMs);
                if (l.failures == 1) {
                    LOG.warn("Writing the dead letters of {} failed; the records stay ARCHIVING and are tried again",
                            sp.key(), Futures.unwrap(failure));
                }
            }

            @Override
            public long nextDeadlineMs() {
                return retryAtMs;
            }

            @Override
            public String toString() {
                return "dead letters";
            }
        };
    }

    /**
     * Starts looking up which letters of the records {@code sp} loaded ARCHIVING (when the queue is
     * new to it), or of a failed append's ({@link Lettered#recheck}), the queue already holds, if
     * there are any; returns whether it did (the share-partition then waits for the answer, which
     * comes back on the shard).
     */
    private boolean lookUp(Shard shard, SharePartition sp, Lettered l, Target target) {
        Set<String> candidates = new HashSet<>(l.recheck);
        if (!target.queue().equals(l.lookedUp)) {
            for (DeadLetterBatch.Letter letter : sp.deadLettersLoaded()) {
                candidates.add(DeadLetterRecords.idOf(letter));
            }
        }
        l.lookedUp = target.queue();
        l.recheck.clear();
        if (candidates.isEmpty()) {
            return false;
        }
        l.lookingUp = true;
        var unused = queues.inQueue(target.queue(), sp.key().groupId(), target.source(), candidates)
                .whenComplete((found, failure) -> shard.execute(() -> {
                    l.lookingUp = false;
                    if (failure != null) {
                        l.lookedUp = null; // tried again at the next cycle
                        l.recheck.addAll(candidates);
                        LOG.warn("Looking up the dead letters of {} in {} failed", sp.key(), target.queue(), failure);
                        return;
                    }
                    if (!found.isEmpty()) {
                        LOG.info("{} dead letters of {} are in the queue already (written before a restart); not writing them again",
                                found.size(), sp.key());
                    }
                    l.inQueue.addAll(found);
                }));
        return true;
    }

    /** Where the letters of {@code source} for {@code groupId} go now. */
    private Target target(String groupId, TopicPartition source) {
        GroupConfig config = groups.config(groupId);
        String name = config.effectiveDeadLetterTopic();
        if (name == null) {
            return Target.none(source, "group " + groupId + " has no " + GroupConfig.DEAD_LETTER_TOPIC_NAME + " any more");
        }
        String prefix = config.brokerConfig().deadLetterTopicPrefix();
        if (!prefix.isEmpty() && !name.startsWith(prefix)) {
            // A name stored under an older prefix: refused when written, as Kafka does.
            return Target.none(source, "Configured DLQ topic name does not comply with the DLQ topic prefix in share group: "
                    + groupId + ", topic: " + name + ", prefix: " + prefix + ".");
        }
        DeadLetterQueues.Queue queue = queues.find(name);
        return switch (queue.state()) {
            case MISSING -> {
                if (!config.brokerConfig().deadLetterAutoCreateTopics()) {
                    yield Target.none(source, "dead-letter topic " + name + " of group " + groupId + " does not exist");
                }
                create(name);
                yield Target.later(source);
            }
            case NOT_ENABLED -> Target.none(source, "dead-letter topic " + name + " of group " + groupId
                    + " does not have " + LogConfig.DEAD_LETTER_GROUP_ENABLE + "=true");
            case NOT_READY -> Target.later(source);
            case READY -> Target.to(source, new TopicPartition(name, source.partition() % queue.partitions()));
        };
    }

    /** Creates a queue topic (errors.deadletterqueue.auto.create.topics.enable), once at a time. */
    private void create(String name) {
        if (!creating.add(name)) {
            return;
        }
        LOG.info("Creating dead-letter topic {} ({} partitions)", name, autoCreatePartitions);
        var unused = queues.create(name, autoCreatePartitions, Map.of(LogConfig.DEAD_LETTER_GROUP_ENABLE, "true",
                        "message.timestamp.type", "CreateTime"))
                .whenComplete((t, failure) -> {
                    creating.remove(name);
                    if (failure != null && !(Futures.unwrap(failure) instanceof TopicExistsException)) {
                        logOnce("cannot create dead-letter topic " + name + ": " + Futures.unwrap(failure));
                    }
                });
    }

    /**
     * On the share-partition's shard: writes the batch's letters that are not in the queue yet;
     * completes with how many of the batch's records have their letter (0 when the queue could not
     * be written).
     */
    private CompletableFuture<Integer> write(Partition partition, SharePartition sp, DeadLetterBatch batch,
            Target target, Set<String> inQueue) {
        String groupId = sp.key().groupId();
        if (target.queue() == null) {
            logOnce(target.unavailable() + "; its dead records are archived without a dead letter");
            return CompletableFuture.completedFuture(0);
        }
        boolean copy = groups.config(groupId).effectiveDeadLetterCopyRecord();
        TopicPartition source = partition.topicPartition();
        List<SimpleRecord> missing = new ArrayList<>();
        List<String> missingIds = new ArrayList<>();
        try {
            List<SimpleRecord> letters = DeadLetterRecords.letters(partition.log(), groupId, source, batch, copy,
                    clock.wallMs());
            for (int i = 0; i < letters.size(); i++) {
                String id = DeadLetterRecords.idOf(batch.letters().get(i));
                if (!inQueue.contains(id)) {
                    missing.add(letters.get(i));
                    missingIds.add(id);
                }
            }
        } catch (IOException e) {
            // The originals may be readable again (a storage error stops the broker, whose restart
            // finds the records ARCHIVING): a passing failure, so not archived without the letters.
            return CompletableFuture.failedFuture(e);
        }
        int alreadyThere = batch.letters().size() - missing.size();
        // Each chunk appended is noted at once: if a later chunk or the ARCHIVED write fails, the
        // records are taken again but not lettered twice.
        Shard shard = partition.shard();
        return appendInChunks(target.queue(), missing, 0, alreadyThere,
                (from, to) -> shard.execute(() -> inQueue.addAll(missingIds.subList(from, to))));
    }

    /** Told of the letters {@code from} (inclusive) to {@code to} (exclusive) once they are in the queue. */
    @FunctionalInterface
    private interface OnAppended {
        void letters(int from, int to);
    }

    /**
     * Appends {@code letters} from index {@code from} on, one record batch of at most {@link
     * #CHUNK_BYTES} (or one letter) after the other; completes with {@code written} plus the letters
     * appended. A chunk the queue refuses for good is counted as not written and logged once; one
     * refused with an error that passes (a {@link RetriableException}) fails the whole with it, the chunks
     * before it appended and told to {@code appended}.
     */
    private CompletableFuture<Integer> appendInChunks(TopicPartition queue, List<SimpleRecord> letters, int from,
            int written, OnAppended appended) {
        if (from >= letters.size()) {
            return CompletableFuture.completedFuture(written);
        }
        int to = from;
        long bytes = 0;
        do {
            bytes += sizeOf(letters.get(to));
            to++;
        } while (to < letters.size() && bytes + sizeOf(letters.get(to)) <= CHUNK_BYTES);
        int end = to;
        return queues.append(queue, letters.subList(from, end)).thenCompose(result -> {
            int ok = end - from;
            Errors error = result.error();
            String why = error + (result.message() == null ? "" : " " + result.message());
            if (error.exception() instanceof RetriableException) {
                return CompletableFuture.failedFuture(error.exception("writing to dead-letter topic "
                        + queue.topic() + " failed: " + why));
            }
            if (error != Errors.NONE) {
                logOnce("writing to dead-letter topic " + queue.topic() + " failed: " + why
                        + "; its dead records are archived without a dead letter");
                ok = 0;
            } else {
                appended.letters(from, end);
            }
            return appendInChunks(queue, letters, end, written + ok, appended);
        });
    }

    private static long sizeOf(SimpleRecord r) {
        long n = 64 + (r.key() == null ? 0 : r.key().remaining()) + (r.value() == null ? 0 : r.value().remaining());
        for (var h : r.headers()) {
            n += h.key().length() + (h.value() == null ? 0 : h.value().length) + 8;
        }
        return n;
    }

    private void logOnce(String cause) {
        if (loggedCauses.add(cause)) {
            LOG.warn("Dead letters: {}", cause);
        }
    }
}
