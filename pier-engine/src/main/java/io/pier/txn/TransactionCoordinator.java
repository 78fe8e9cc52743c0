package io.pier.txn;

import io.pier.common.Clock;
import io.pier.state.TransactionRecord;
import io.pier.state.TransactionStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction coordinator of one shard: the transactional ids that hash there, each a
 * {@link TransactionMetadata}, with Kafka 4.4's rules and error codes
 * ({@code org.apache.kafka.coordinator.transaction.TransactionCoordinator}).
 *
 * <pre>
 *   InitProducerId / AddPartitions / AddOffsets / EndTxn (shard thread)
 *     -&gt; checks, then metadata.prepare(next state)            (others: CONCURRENT_TRANSACTIONS)
 *     -&gt; store.write(record) ... durable, back on the shard   -&gt; transitionTo(record), reply
 *   EndTxn after PREPARE_* is durable: reply, then markers on every partition and group
 *     -&gt; markers durable -&gt; COMPLETE_* written                (a marker failure: tried again later)
 * </pre>
 *
 * <p><b>Threading.</b> Every public method runs on the owning shard's thread; the futures of the
 * store, the markers and the producer id source may complete anywhere, and their continuations hop
 * back through {@code shard}. Replies complete on the shard. No locks, no threads, no timers: the
 * owner calls {@link #onDeadlines} once {@link #nextDeadlineMs} (wall ms of {@code clock}) has come.
 *
 * <p><b>Durability.</b> Nothing is answered before the state it reports is durable; a transaction
 * found in PREPARE_COMMIT or PREPARE_ABORT by {@link #recover} is completed (markers are idempotent,
 * so rewriting them is safe), an ONGOING one goes on and times out normally.
 */
public final class TransactionCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);

    /** Kafka's {@code isEpochExhausted}: the epoch one below the last usable one. */
    static final short EXHAUSTED_EPOCH = Short.MAX_VALUE - 1;
    static final short TV1 = 1;
    static final short TV2 = 2;

    private final TransactionConfig config;
    private final Clock clock;
    private final ProducerIdSource producerIds;
    private final TransactionStore store;
    private final TransactionMarkers markers;
    private final Executor shard;
    private final int coordinatorEpoch;
    private final Map<String, TransactionMetadata> txns = new HashMap<>();

    /**
     * @param shard runs a continuation on the owning shard's thread
     * @param coordinatorEpoch carried by every marker, so a partition can refuse markers of an
     *     older coordinator
     */
    public TransactionCoordinator(TransactionConfig config, Clock clock, ProducerIdSource producerIds,
            TransactionStore store, TransactionMarkers markers, Executor shard, int coordinatorEpoch) {
        this.config = config;
        this.clock = clock;
        this.producerIds = producerIds;
        this.store = store;
        this.markers = markers;
        this.shard = shard;
        this.coordinatorEpoch = coordinatorEpoch;
    }

    /**
     * Takes the durable state of this shard's ids (after a restart) and completes every transaction
     * caught in PREPARE_COMMIT or PREPARE_ABORT: its markers are written again, then COMPLETE_*.
     */
    public void recover(Collection<TransactionRecord> records) {
        for (TransactionRecord r : records) {
            TransactionMetadata m = new TransactionMetadata(r);
            txns.put(r.transactionalId(), m);
            // Once per id and restart: what the coordinator starts from is what a read_committed
            // anomaly after a crash has to be traced to (which outcome, which epoch, which partitions).
            LOG.info("Transactional id {} recovered in {}: producer {} epoch {} (last epoch {}), partitions {},"
                    + " groups {}", r.transactionalId(), m.state(), r.producerId(), r.producerEpoch(), r.lastProducerEpoch(),
                    r.partitions(), r.groupIds());
            if (isPrepared(m.state())) {
                m.completingAfterRestart = true;
                writeMarkers(m);
            }
        }
    }

    // ---------------------------------------------------------------- InitProducerId

    /**
     * InitProducerId of a transactional producer.
     *
     * @param expectedProducerId with {@code expectedEpoch}, the producer's current id and epoch when
     *     it re-initialises after an abortable error (KIP-360); -1 for a new producer
     */
    public CompletableFuture<ProducerIdAndEpoch> initProducerId(String transactionalId, int timeoutMs,
            long expectedProducerId, short expectedEpoch) {
        CompletableFuture<ProducerIdAndEpoch> reply = new CompletableFuture<>();
        if (transactionalId == null || transactionalId.isEmpty()) {
            reply.complete(ProducerIdAndEpoch.error(Errors.INVALID_REQUEST));
            return reply;
        }
        if (timeoutMs <= 0 || timeoutMs > config.maxTimeoutMs()) {
            reply.complete(ProducerIdAndEpoch.error(Errors.INVALID_TRANSACTION_TIMEOUT));
            return reply;
        }
        TransactionMetadata m = txns.get(transactionalId);
        if (m == null) {
            initNew(transactionalId, timeoutMs, reply);
            return reply;
        }
        TransactionRecord r = m.current();
        if (m.hasPending()) {
            reply.complete(ProducerIdAndEpoch.error(Errors.CONCURRENT_TRANSACTIONS));
        } else if (expectedProducerId != -1 && !isExpectedProducer(r, expectedProducerId, expectedEpoch)) {
            reply.complete(ProducerIdAndEpoch.error(Errors.PRODUCER_FENCED));
        } else if (m.state() == TransactionState.ONGOING) {
            // Kafka: abort the ongoing transaction under a bumped epoch (fencing the old producer),
            // and answer CONCURRENT_TRANSACTIONS: the client retries and then gets an epoch
            // bumped a second time, once the abort is complete.
            fenceAndAbort(m);
            reply.complete(ProducerIdAndEpoch.error(Errors.CONCURRENT_TRANSACTIONS));
        } else if (!m.state().isIdle()) {
            reply.complete(ProducerIdAndEpoch.error(Errors.CONCURRENT_TRANSACTIONS));
        } else if (expectedProducerId != -1 && isRetriedInit(r, expectedProducerId, expectedEpoch)) {
            // The response of a bump this producer asked for was lost: the same answer again.
            reply.complete(new ProducerIdAndEpoch(Errors.NONE, r.producerId(), r.producerEpoch()));
        } else if (r.producerEpoch() >= EXHAUSTED_EPOCH) {
            m.prepare(TransactionState.EMPTY);
            then(producerIds.nextProducerId(), (pid, e) -> {
                if (e != null) {
                    m.abandonPending();
                    reply.complete(ProducerIdAndEpoch.error(Errors.COORDINATOR_NOT_AVAILABLE));
                    return;
                }
                TransactionTransit t = new TransactionTransit(r, TransactionState.EMPTY, clock.wallMs()).cleared();
                t.prevProducerId = r.producerId();
                t.producerId = pid;
                t.producerEpoch = 0;
                t.lastProducerEpoch = -1;
                t.timeoutMs = timeoutMs;
                answerInit(m, t.build(), reply);
            });
        } else {
            m.prepare(TransactionState.EMPTY);
            TransactionTransit t = new TransactionTransit(r, TransactionState.EMPTY, clock.wallMs()).cleared();
            // As Kafka: the epoch before the bump is kept only when the producer named it, so
            // that a retry of this very InitProducerId can be told from a stale producer.
            t.lastProducerEpoch = expectedProducerId == -1 ? -1 : r.producerEpoch();
            t.producerEpoch = (short) (r.producerEpoch() + 1);
            t.timeoutMs = timeoutMs;
            answerInit(m, t.build(), reply);
        }
        return reply;
    }

    private void initNew(String transactionalId, int timeoutMs, CompletableFuture<ProducerIdAndEpoch> reply) {
        long nowMs = clock.wallMs();
        // A placeholder with a pending change, so a concurrent InitProducerId of the same id waits.
        TransactionMetadata m = new TransactionMetadata(new TransactionRecord(transactionalId, -1, -1, -1,
                (short) -1, (short) -1, timeoutMs, TransactionState.EMPTY.id(), Set.of(), Set.of(), -1, nowMs, TV1));
        txns.put(transactionalId, m);
        m.prepare(TransactionState.EMPTY);
        then(producerIds.nextProducerId(), (pid, e) -> {
            if (e != null) {
                txns.remove(transactionalId);
                reply.complete(ProducerIdAndEpoch.error(Errors.COORDINATOR_NOT_AVAILABLE));
                return;
            }
            TransactionTransit t = new TransactionTransit(m.current(), TransactionState.EMPTY, clock.wallMs());
            t.producerId = pid;
            t.producerEpoch = 0;
            answerInit(m, t.build(), reply);
        });
    }

    private void answerInit(TransactionMetadata m, TransactionRecord next, CompletableFuture<ProducerIdAndEpoch> reply) {
        persist(m, next, () -> reply.complete(new ProducerIdAndEpoch(Errors.NONE, next.producerId(),
                next.producerEpoch())), err -> reply.complete(ProducerIdAndEpoch.error(err)));
    }

    private static boolean isExpectedProducer(TransactionRecord r, long pid, short epoch) {
        if (pid == r.producerId()) {
            return epoch == r.producerEpoch() || epoch == r.lastProducerEpoch();
        }
        // After an exhausted epoch moved the id on, the producer may still know the previous id.
        return pid == r.prevProducerId() && r.producerEpoch() == 0;
    }

    private static boolean isRetriedInit(TransactionRecord r, long pid, short epoch) {
        return pid == r.producerId() && epoch == r.lastProducerEpoch() && r.lastProducerEpoch() >= 0;
    }

    // ---------------------------------------------------------------- AddPartitions / AddOffsets

    /** AddPartitionsToTxn from the client (v0-3, or v4+ with verifyOnly false). */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
            Collection<TopicPartition> partitions) {
        return add(transactionalId, producerId, producerEpoch, Set.copyOf(partitions), Set.of(), TV1);
    }

    /** AddOffsetsToTxn: the transaction will commit (or drop) {@code groupId}'s offsets. */
    public CompletableFuture<Errors> addOffsets(String transactionalId, long producerId, short producerEpoch,
            String groupId) {
        return add(transactionalId, producerId, producerEpoch, Set.of(), Set.of(groupId), TV1);
    }

    /**
     * The Produce path's check of a transactional batch for {@code partition} (KIP-890): under
     * TV2 the partition joins the transaction implicitly (Kafka's partition leader sends an
     * AddPartitionsToTxn of its own), under TV1 it must already be in the ongoing transaction of
     * ({@code producerId}, {@code producerEpoch}), else INVALID_TXN_STATE.
     */
    public CompletableFuture<Errors> verifyOrAddPartition(String transactionalId, long producerId,
            short producerEpoch, TopicPartition partition, boolean transactionV2) {
        if (transactionV2 && config.transactionV2()) {
            return add(transactionalId, producerId, producerEpoch, Set.of(partition), Set.of(), TV2);
        }
        TransactionMetadata m = txns.get(transactionalId);
        Errors error = producerError(m, producerId, producerEpoch);
        if (error == Errors.NONE) {
            error = m.state() == TransactionState.ONGOING && m.current().partitions().contains(partition)
                    ? Errors.NONE : Errors.INVALID_TXN_STATE;
        }
        return CompletableFuture.completedFuture(error);
    }

    /**
     * The TxnOffsetCommit path's check (KIP-890), as {@link #verifyOrAddPartition} for the group's
     * offsets: under TV2 the group joins the transaction implicitly, under TV1 AddOffsetsToTxn must
     * have added it, else INVALID_TXN_STATE.
     */
    public CompletableFuture<Errors> verifyOrAddGroup(String transactionalId, long producerId, short producerEpoch,
            String groupId, boolean transactionV2) {
        if (transactionV2 && config.transactionV2()) {
            return add(transactionalId, producerId, producerEpoch, Set.of(), Set.of(groupId), TV2);
        }
        TransactionMetadata m = txns.get(transactionalId);
        Errors error = producerError(m, producerId, producerEpoch);
        if (error == Errors.NONE) {
            error = m.state() == TransactionState.ONGOING && m.current().groupIds().contains(groupId)
                    ? Errors.NONE : Errors.INVALID_TXN_STATE;
        }
        return CompletableFuture.completedFuture(error);
    }

    private CompletableFuture<Errors> add(String transactionalId, long producerId, short producerEpoch,
            Set<TopicPartition> partitions, Set<String> groupIds, short version) {
        CompletableFuture<Errors> reply = new CompletableFuture<>();
        TransactionMetadata m = txns.get(transactionalId);
        if (m != null && isBusyFor(m, producerId, producerEpoch)) {
            // Another change of this transaction is being written: an add of another partition,
            // or the last transaction's markers. Kafka answers CONCURRENT_TRANSACTIONS and the
            // client (for Produce, the partition leader) retries after a backoff; here the
            // request waits on the shard for that write instead, then runs again.
            m.park(new TransactionMetadata.ParkedAdd(producerId, producerEpoch, partitions, groupIds, version,
                    reply));
            return reply;
        }
        Errors error = producerError(m, producerId, producerEpoch);
        if (error != Errors.NONE) {
            reply.complete(error);
            return reply;
        }
        TransactionRecord r = m.current();
        if (m.state() == TransactionState.ONGOING && r.partitions().containsAll(partitions)
                && r.groupIds().containsAll(groupIds)) {
            reply.complete(Errors.NONE);
        } else if (m.state() != TransactionState.ONGOING && !m.state().isIdle()) {
            // A commit or abort is being completed: the client retries once it is.
            reply.complete(Errors.CONCURRENT_TRANSACTIONS);
        } else {
            long nowMs = clock.wallMs();
            TransactionTransit t = new TransactionTransit(r, TransactionState.ONGOING, nowMs);
            if (m.state() != TransactionState.ONGOING) {
                t.cleared().startTimestampMs = nowMs;
                t.transactionVersion = version;
            } else if (version == TV2) {
                t.transactionVersion = TV2;
            }
            t.partitions.addAll(partitions);
            t.groupIds.addAll(groupIds);
            m.prepare(TransactionState.ONGOING);
            persist(m, t.build(), () -> reply.complete(Errors.NONE), reply::complete);
        }
        return reply;
    }

    /**
     * Runs the adds parked while a write was under way again, those of one producer id and epoch
     * merged into one add: one write for every partition the producer's Produce requests brought
     * meanwhile (Kafka's partition leaders batch their adds to the coordinator likewise).
     */
    private void retryParked(TransactionMetadata m) {
        List<TransactionMetadata.ParkedAdd> parked = m.takeParked();
        Map<Producer, List<TransactionMetadata.ParkedAdd>> byProducer = new LinkedHashMap<>();
        for (TransactionMetadata.ParkedAdd a : parked) {
            byProducer.computeIfAbsent(new Producer(a.producerId(), a.producerEpoch()), k -> new ArrayList<>()).add(a);
        }
        byProducer.forEach((producer, adds) -> {
            Set<TopicPartition> partitions = new HashSet<>();
            Set<String> groupIds = new HashSet<>();
            short version = TV1;
            for (TransactionMetadata.ParkedAdd a : adds) {
                partitions.addAll(a.partitions());
                groupIds.addAll(a.groupIds());
                version = (short) Math.max(version, a.version());
            }
            // Answered inline when the add needs no write: a Produce request that came after
            // these must not have its batch appended before theirs (the sequence order).
            var unused = add(m.current().transactionalId(), producer.id(), producer.epoch(), partitions, groupIds,
                    version).whenComplete((error, e) -> adds.forEach(
                            a -> a.reply().complete(e != null ? Errors.UNKNOWN_SERVER_ERROR : error)));
        });
    }

    private record Producer(long id, short epoch) {}

    /** Answers every parked add {@code error}. */
    private static void answerParked(TransactionMetadata m, Errors error) {
        m.takeParked().forEach(a -> a.reply().complete(error));
    }

    /**
     * Whether a change of the transaction is under way (a pending write, or PREPARE_* with its
     * markers on their way) and the request is from its producer, under the id and epoch it goes
     * on with.
     */
    private static boolean isBusyFor(TransactionMetadata m, long producerId, short producerEpoch) {
        TransactionRecord r = m.current();
        boolean ownProducer = (producerId == r.producerId() && producerEpoch == r.producerEpoch())
                || (producerId == r.nextProducerId() && producerEpoch == 0);
        return ownProducer && (m.hasPending() || isPrepared(m.state()));
    }

    /** The checks every client operation starts with; NONE when they pass. */
    private static Errors producerError(TransactionMetadata m, long producerId, short producerEpoch) {
        if (m == null || m.current().producerId() != producerId) {
            return Errors.INVALID_PRODUCER_ID_MAPPING;
        }
        if (m.current().producerEpoch() != producerEpoch) {
            return Errors.PRODUCER_FENCED;
        }
        return m.hasPending() ? Errors.CONCURRENT_TRANSACTIONS : Errors.NONE;
    }

    // ---------------------------------------------------------------- EndTxn

    /**
     * EndTxn. The reply comes once PREPARE_COMMIT / PREPARE_ABORT is durable (as in Kafka); the
     * markers and COMPLETE_* follow, during which the id answers CONCURRENT_TRANSACTIONS.
     *
     * @param transactionV2 the client's EndTxn is v5+ (KIP-890 part 2; honoured while
     *     {@code transaction.version} is 2): the epoch is bumped by every
     *     EndTxn, markers carry the bumped epoch and the reply gives the id and epoch to go on with
     */
    public CompletableFuture<ProducerIdAndEpoch> endTxn(String transactionalId, long producerId,
            short producerEpoch, boolean commit, boolean transactionV2) {
        TransactionMetadata m = txns.get(transactionalId);
        if (m == null) {
            return done(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        return transactionV2 && config.transactionV2() ? endTxnV2(m, producerId, producerEpoch, commit)
                : endTxnV1(m, producerId, producerEpoch, commit);
    }

    private CompletableFuture<ProducerIdAndEpoch> endTxnV1(TransactionMetadata m, long producerId,
            short producerEpoch, boolean commit) {
        Errors error = producerError(m, producerId, producerEpoch);
        if (error != Errors.NONE) {
            return done(error);
        }
        TransactionRecord r = m.current();
        return switch (m.state()) {
            case ONGOING -> prepareEnd(m, commit, r.producerEpoch(), -1);
            // A retry of an EndTxn whose answer was lost: the outcome it asked for stands.
            case COMPLETE_COMMIT -> commit ? answer(r) : done(Errors.INVALID_TXN_STATE);
            case COMPLETE_ABORT -> commit ? done(Errors.INVALID_TXN_STATE) : answer(r);
            case PREPARE_COMMIT -> done(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            case PREPARE_ABORT -> done(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            case PREPARE_EPOCH_FENCE -> done(Errors.CONCURRENT_TRANSACTIONS);
            case EMPTY, DEAD -> done(Errors.INVALID_TXN_STATE);
        };
    }

    private CompletableFuture<ProducerIdAndEpoch> endTxnV2(TransactionMetadata m, long producerId,
            short producerEpoch, boolean commit) {
        TransactionRecord r = m.current();
        // A retry carries the epoch from before the bump its first attempt caused.
        boolean retry = m.state() != TransactionState.ONGOING
                && ((producerId == r.producerId() && producerEpoch == r.lastProducerEpoch() && producerEpoch >= 0)
                        || (producerId == r.prevProducerId() && r.producerEpoch() == 0));
        if (!retry) {
            Errors error = producerError(m, producerId, producerEpoch);
            if (error != Errors.NONE) {
                return done(error);
            }
        } else if (m.hasPending()) {
            return done(Errors.CONCURRENT_TRANSACTIONS);
        }
        return switch (m.state()) {
            case ONGOING -> bumpAndEnd(m, commit);
            case PREPARE_COMMIT -> done(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            case PREPARE_ABORT -> done(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            case COMPLETE_COMMIT -> retry && commit ? answer(r) : abortIdle(m, commit, retry);
            case COMPLETE_ABORT -> retry && !commit ? answer(r) : abortIdle(m, commit, retry);
            case EMPTY -> abortIdle(m, commit, retry);
            case PREPARE_EPOCH_FENCE -> done(Errors.CONCURRENT_TRANSACTIONS);
            case DEAD -> done(Errors.INVALID_TXN_STATE);
        };
    }

    /** TV2 allows an abort with nothing to abort (the client's epoch is bumped); a commit of it is refused. */
    private CompletableFuture<ProducerIdAndEpoch> abortIdle(TransactionMetadata m, boolean commit, boolean retry) {
        if (commit || retry) {
            return done(Errors.INVALID_TXN_STATE);
        }
        return bumpAndEnd(m, false);
    }

    /** TV2: the transaction ends under epoch + 1, or, when that is exhausted, hands over to a new id. */
    private CompletableFuture<ProducerIdAndEpoch> bumpAndEnd(TransactionMetadata m, boolean commit) {
        TransactionRecord r = m.current();
        if (r.producerEpoch() < EXHAUSTED_EPOCH) {
            return prepareEnd(m, commit, (short) (r.producerEpoch() + 1), -1);
        }
        CompletableFuture<ProducerIdAndEpoch> reply = new CompletableFuture<>();
        m.prepare(commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT);
        then(producerIds.nextProducerId(), (pid, e) -> {
            m.abandonPending();
            if (e != null) {
                reply.complete(ProducerIdAndEpoch.error(Errors.COORDINATOR_NOT_AVAILABLE));
            } else {
                then(prepareEnd(m, commit, (short) (r.producerEpoch() + 1), pid), (v, x) -> reply.complete(v));
            }
        });
        return reply;
    }

    /**
     * Writes PREPARE_COMMIT / PREPARE_ABORT under {@code epoch}, answers, then writes the markers.
     *
     * @param nextProducerId the id a TV2 transaction goes on with after an exhausted epoch, or -1
     */
    private CompletableFuture<ProducerIdAndEpoch> prepareEnd(TransactionMetadata m, boolean commit, short epoch,
            long nextProducerId) {
        CompletableFuture<ProducerIdAndEpoch> reply = new CompletableFuture<>();
        TransactionRecord r = m.current();
        TransactionState target = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
        TransactionTransit t = new TransactionTransit(r, target, clock.wallMs());
        if (epoch != r.producerEpoch()) {
            t.lastProducerEpoch = r.producerEpoch();
            t.producerEpoch = epoch;
            t.transactionVersion = TV2;
        }
        t.nextProducerId = nextProducerId;
        m.prepare(target);
        TransactionRecord next = t.build();
        persist(m, next, () -> {
            reply.complete(nextProducerId != -1 ? new ProducerIdAndEpoch(Errors.NONE, nextProducerId, (short) 0)
                    : new ProducerIdAndEpoch(Errors.NONE, next.producerId(), next.producerEpoch()));
            writeMarkers(m);
        }, err -> reply.complete(ProducerIdAndEpoch.error(err)));
        return reply;
    }

    /** Kafka's abort of a transaction whose producer is fenced (InitProducerId, or the timeout). */
    private void fenceAndAbort(TransactionMetadata m) {
        TransactionRecord r = m.current();
        // An exhausted epoch is not bumped further: the abort goes out under it (as in Kafka).
        short fenced = r.producerEpoch() < EXHAUSTED_EPOCH ? (short) (r.producerEpoch() + 1) : r.producerEpoch();
        TransactionTransit t = new TransactionTransit(r, TransactionState.PREPARE_EPOCH_FENCE, clock.wallMs());
        t.producerEpoch = fenced;
        t.lastProducerEpoch = r.producerEpoch();
        m.transitionTo(t.build());
        var unused = prepareEnd(m, false, fenced, -1);
    }

    // ---------------------------------------------------------------- markers and completion

    private void writeMarkers(TransactionMetadata m) {
        if (m.markersInFlight || !isPrepared(m.state())) {
            return;
        }
        TransactionRecord r = m.current();
        boolean commit = m.state() == TransactionState.PREPARE_COMMIT;
        m.markersInFlight = true;
        CompletableFuture<Void> written;
        try {
            written = markers.write(r.producerId(), r.producerEpoch(), coordinatorEpoch, commit, r.partitions(),
                    r.groupIds());
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        then(written, (v, e) -> {
            m.markersInFlight = false;
            if (e != null) {
                m.markerRetryAtMonoMs = clock.monoMs() + config.markerRetryBackoffMs();
                // Until its markers are written the id answers CONCURRENT_TRANSACTIONS, which its
                // producer retries without end: say so, on the first failure and every 100th.
                if (m.markerFailures++ % 100 == 0) {
                    LOG.warn("Writing the {} markers of transactional id {} failed ({} in a row); retrying every {} ms",
                            commit ? "COMMIT" : "ABORT", r.transactionalId(), m.markerFailures,
                            config.markerRetryBackoffMs(), e);
                }
                answerParked(m, Errors.CONCURRENT_TRANSACTIONS);
            } else {
                m.markerFailures = 0;
                complete(m, commit);
            }
        });
    }

    private void complete(TransactionMetadata m, boolean commit) {
        TransactionRecord r = m.current();
        TransactionState target = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
        TransactionTransit t = new TransactionTransit(r, target, clock.wallMs()).cleared();
        if (r.nextProducerId() != -1) {
            t.prevProducerId = r.producerId();
            t.producerId = r.nextProducerId();
            t.nextProducerId = -1;
            t.producerEpoch = 0;
            t.lastProducerEpoch = -1;
        }
        m.prepare(target);
        // On a failed write the store has failed (fatal): the transaction completes after the restart.
        persist(m, t.build(), () -> {
            if (m.completingAfterRestart) {
                m.completingAfterRestart = false;
                LOG.info("Transactional id {}: the {} found after the restart is complete, its markers written"
                        + " under producer {} epoch {} to {}", r.transactionalId(), commit ? "commit" : "abort",
                        r.producerId(), r.producerEpoch(), r.partitions());
            }
        }, err -> m.markerRetryAtMonoMs = clock.monoMs() + config.markerRetryBackoffMs());
    }

    private static boolean isPrepared(TransactionState s) {
        return s == TransactionState.PREPARE_COMMIT || s == TransactionState.PREPARE_ABORT;
    }

    // ---------------------------------------------------------------- deadlines

    /**
     * Aborts the ongoing transactions past their timeout (Kafka's abortTimedOutTransactions: the
     * epoch is bumped, fencing the producer), retries markers that failed, and forgets ids idle
     * past {@code transactional.id.expiration.ms}. Returns how many ids it acted on.
     */
    public int onDeadlines() {
        long nowMs = clock.wallMs();
        long monoMs = clock.monoMs();
        int acted = 0;
        for (TransactionMetadata m : List.copyOf(txns.values())) {
            if (m.hasPending() || m.markersInFlight || nowMs < deadlineOf(m, nowMs, monoMs)) {
                continue;
            }
            acted++;
            if (m.state() == TransactionState.ONGOING) {
                fenceAndAbort(m);
            } else if (isPrepared(m.state())) {
                writeMarkers(m);
            } else if (m.state().isIdle()) {
                expire(m);
            }
        }
        return acted;
    }

    /** The earliest wall-clock time {@link #onDeadlines} has work; Long.MAX_VALUE for none. */
    public long nextDeadlineMs() {
        long nowMs = clock.wallMs();
        long monoMs = clock.monoMs();
        long next = Long.MAX_VALUE;
        for (TransactionMetadata m : txns.values()) {
            if (!m.hasPending() && !m.markersInFlight) {
                next = Math.min(next, deadlineOf(m, nowMs, monoMs));
            }
        }
        return next;
    }

    /**
     * {@code m}'s next deadline in wall ms. Timeouts and expiry are wall times, as in Kafka; a
     * marker retry is a monotonic delay, given as the wall time it comes to from {@code nowMs}.
     */
    private long deadlineOf(TransactionMetadata m, long nowMs, long monoMs) {
        TransactionRecord r = m.current();
        if (m.state() == TransactionState.ONGOING) {
            return r.startTimestampMs() + r.timeoutMs();
        }
        if (isPrepared(m.state())) {
            return m.markerRetryAtMonoMs == Long.MIN_VALUE ? nowMs : nowMs + Math.max(0, m.markerRetryAtMonoMs - monoMs);
        }
        if (m.state().isIdle()) {
            long last = r.lastUpdateTimestampMs();
            return last > Long.MAX_VALUE - config.idExpirationMs() ? Long.MAX_VALUE : last + config.idExpirationMs();
        }
        return Long.MAX_VALUE;
    }

    private void expire(TransactionMetadata m) {
        TransactionTransit t = new TransactionTransit(m.current(), TransactionState.DEAD, clock.wallMs());
        TransactionRecord dead = t.build();
        m.prepare(TransactionState.DEAD);
        String id = dead.transactionalId();
        then(store.remove(id), (v, e) -> {
            if (e != null) {
                m.abandonPending();
            } else {
                m.transitionTo(dead);
                txns.remove(id);
            }
        });
    }

    // ---------------------------------------------------------------- Describe / List

    /** DescribeTransactions of one id; empty: TRANSACTIONAL_ID_NOT_FOUND. */
    public Optional<TransactionDescription> describe(String transactionalId) {
        return TransactionQueries.describe(txns.get(transactionalId));
    }

    /** ListTransactions over this shard's ids. */
    public List<TransactionListing> list(TransactionFilter filter) {
        return TransactionQueries.list(txns.values(), filter, clock.wallMs());
    }

    // ---------------------------------------------------------------- plumbing

    /** Writes {@code next}; once durable, back on the shard, transitions to it and runs {@code onDurable}. */
    private void persist(TransactionMetadata m, TransactionRecord next, Runnable onDurable, Consumer<Errors> onFailure) {
        CompletableFuture<Void> written;
        try {
            written = store.write(next);
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        then(written, (v, e) -> {
            if (e != null) {
                m.abandonPending();
                if (m.current().producerId() == -1) {
                    txns.remove(next.transactionalId());
                }
                // Kafka's answer when the transaction log cannot be written: the client looks again.
                onFailure.accept(Errors.COORDINATOR_NOT_AVAILABLE);
            } else {
                m.transitionTo(next);
                onDurable.run();
            }
            retryParked(m);
        });
    }

    private <T> void then(CompletableFuture<T> future, BiConsumer<T, Throwable> onShard) {
        var unused = future.whenCompleteAsync(onShard, shard);
    }

    private static CompletableFuture<ProducerIdAndEpoch> answer(TransactionRecord r) {
        return CompletableFuture.completedFuture(new ProducerIdAndEpoch(Errors.NONE, r.producerId(),
                r.producerEpoch()));
    }

    private static CompletableFuture<ProducerIdAndEpoch> done(Errors error) {
        return CompletableFuture.completedFuture(ProducerIdAndEpoch.error(error));
    }
}
