package io.pier.service;

import io.pier.common.Clock;
import io.pier.state.TransactionRecord;
import io.pier.state.TransactionStore;
import io.pier.txn.ProducerIdAndEpoch;
import io.pier.txn.TransactionConfig;
import io.pier.txn.TransactionCoordinator;
import io.pier.txn.TransactionDescription;
import io.pier.txn.TransactionFilter;
import io.pier.txn.TransactionListing;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.protocol.Errors;

/**
 * The transaction coordinators, one per shard, each owning the transactional ids that hash to its
 * shard as group ids do (Kafka spreads them over {@code __transaction_state}'s partitions the same
 * way). Every call runs on the id's shard; the answers complete there too. Markers go to the
 * partitions' own shards through {@link Logs#writeMarker}, and to the groups' offsets through the
 * consumer groups ({@link ConsumerGroups#completeTransaction}).
 */
public final class Transactions implements TransactionCoordinators {
    /** Every marker of this broker's coordinators carries it: one coordinator, never replaced. */
    private static final int COORDINATOR_EPOCH = 0;

    private final PartitionRegistry partitions;
    private final Logs logs;
    private final ConsumerGroups groups;
    private final TopicService topics;
    private final Clock clock;
    private final TransactionConfig config;
    private final Slot[] slots;

    private static final class Slot {
        final Shard shard;
        final EarliestTimer timer;
        TransactionCoordinator coordinator;

        Slot(Shard shard) {
            this.shard = shard;
            this.timer = new EarliestTimer(shard);
        }
    }

    public Transactions(PartitionRegistry partitions, TopicService topics, Logs logs, ConsumerGroups groups,
            TransactionStore store,
            ProducerIdAllocator producerIds, Clock clock, Map<String, String> config) {
        this.partitions = partitions;
        this.logs = logs;
        this.groups = groups;
        this.topics = topics;
        this.clock = clock;
        this.config = TransactionConfig.fromProperties(config);
        Shard[] shards = partitions.shards();
        slots = new Slot[shards.length];
        for (int i = 0; i < shards.length; i++) {
            Slot s = new Slot(shards[i]);
            s.coordinator = new TransactionCoordinator(this.config, clock, producerIds::nextProducerId, store,
                    this::writeMarkers, command -> s.shard.execute(() -> {
                        command.run();
                        rearm(s);
                    }), COORDINATOR_EPOCH);
            slots[i] = s;
        }
        // After a restart each coordinator takes its ids back and completes what was being
        // committed or aborted; queued now, run in the shards' first cycles.
        Map<Slot, List<TransactionRecord>> byShard = new HashMap<>();
        for (TransactionRecord r : store.transactions().values()) {
            byShard.computeIfAbsent(slot(r.transactionalId()), k -> new ArrayList<>()).add(r);
        }
        byShard.forEach((s, records) -> s.shard.execute(() -> {
            s.coordinator.recover(records);
            rearm(s);
        }));
    }

    private Slot slot(String transactionalId) {
        return slots[partitions.shardForKey(transactionalId).id()];
    }

    /** Runs {@code work} on the id's shard, then re-arms that shard's timer. */
    private <T> CompletableFuture<T> onShard(String transactionalId,
            Function<TransactionCoordinator, CompletableFuture<T>> work) {
        Slot s = slot(transactionalId);
        return s.shard.compose(() -> {
            try {
                return work.apply(s.coordinator);
            } finally {
                rearm(s);
            }
        });
    }

    /** Shard thread only: keeps one timer at the coordinator's earliest deadline (wall ms). */
    private void rearm(Slot s) {
        long nextWall = s.coordinator.nextDeadlineMs();
        if (nextWall == Long.MAX_VALUE) {
            return;
        }
        // The shard's timers run on its monotonic clock; the coordinator's deadlines are wall times.
        s.timer.armAt(s.shard.nowMs() + Math.max(0, nextWall - clock.wallMs()), () -> {
            s.coordinator.onDeadlines();
            rearm(s);
        });
    }

    /**
     * The markers of one transaction: a control batch on each partition (a partition whose topic
     * is gone needs none) and the commit or drop of each group's pending offsets; done once all
     * are durable.
     */
    private CompletableFuture<Void> writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch,
            boolean commit, Collection<TopicPartition> tps, Collection<String> groupIds) {
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (TopicPartition tp : tps) {
            all.add(logs.writeMarker(tp, producerId, producerEpoch, coordinatorEpoch, commit).thenAccept(a -> {
                // A deleted topic needs no marker. A partition not open yet (markers rewritten just
                // after a restart) is no excuse: the coordinator writes them again after its backoff.
                boolean deleted = a.error() == Errors.UNKNOWN_TOPIC_OR_PARTITION && topics.topic(tp.topic()) == null;
                if (a.error() != Errors.NONE && !deleted) {
                    throw new IllegalStateException("marker on " + tp + " failed: " + a.error() + " " + a.message());
                }
            }));
        }
        for (String groupId : groupIds) {
            all.add(groups.completeTransaction(groupId, producerId, commit));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    @Override
    public CompletableFuture<ProducerIdAndEpoch> initProducerId(String transactionalId, int timeoutMs,
            long producerId, short producerEpoch) {
        return onShard(transactionalId, c -> c.initProducerId(transactionalId, timeoutMs, producerId, producerEpoch));
    }

    @Override
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
            Collection<TopicPartition> tps) {
        return onShard(transactionalId, c -> c.addPartitions(transactionalId, producerId, producerEpoch, tps));
    }

    @Override
    public CompletableFuture<Errors> addOffsets(String transactionalId, long producerId, short producerEpoch,
            String groupId) {
        return onShard(transactionalId, c -> c.addOffsets(transactionalId, producerId, producerEpoch, groupId));
    }

    @Override
    public CompletableFuture<Errors> verifyPartition(String transactionalId, long producerId, short producerEpoch,
            TopicPartition tp) {
        return onShard(transactionalId,
                c -> c.verifyOrAddPartition(transactionalId, producerId, producerEpoch, tp, false));
    }

    /**
     * The Produce path of a transactional batch: checked (or added, KIP-890 part 2) by the
     * coordinator, see {@link TransactionCoordinator#verifyOrAddPartition}, then appended.
     *
     * <p>The append is handed to the partition's shard from the coordinator's shard thread, always:
     * a shard takes commands from other agents before those from event loops, so if some batches
     * of a producer left from an event loop (a check already answered when the Produce path looked)
     * and others from the coordinator, a later batch could reach the log first and be refused out
     * of sequence.
     */
    @Override
    public CompletableFuture<Logs.Appended> appendTransactional(String transactionalId, long producerId,
            short producerEpoch, TopicPartition tp, MemoryRecords records, boolean transactionV2) {
        return onShard(transactionalId, c -> c.verifyOrAddPartition(transactionalId, producerId, producerEpoch, tp,
                transactionV2).thenCompose(e -> e == Errors.NONE ? logs.append(tp, records)
                        : CompletableFuture.completedFuture(Logs.Appended.failed(produceError(e),
                                "transactional batch refused: " + e))));
    }

    /** What the producer is told when its transaction does not take the batch (Kafka's mapping). */
    private static Errors produceError(Errors verification) {
        return switch (verification) {
            case PRODUCER_FENCED, INVALID_PRODUCER_EPOCH -> Errors.INVALID_PRODUCER_EPOCH;
            // Retriable for the client, as Kafka answers while the coordinator is busy.
            case CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS -> Errors.NOT_ENOUGH_REPLICAS;
            default -> Errors.INVALID_TXN_STATE;
        };
    }

    @Override
    public short transactionVersion() {
        return config.transactionVersion();
    }

    /** TxnOffsetCommit's check: the group is in the ongoing transaction (TV1), or joins it (TV2). */
    @Override
    public CompletableFuture<Errors> verifyOrAddGroup(String transactionalId, long producerId, short producerEpoch,
            String groupId, boolean transactionV2) {
        return onShard(transactionalId,
                c -> c.verifyOrAddGroup(transactionalId, producerId, producerEpoch, groupId, transactionV2));
    }

    @Override
    public CompletableFuture<ProducerIdAndEpoch> endTxn(String transactionalId, long producerId, short producerEpoch,
            boolean commit, boolean transactionV2) {
        return onShard(transactionalId,
                c -> c.endTxn(transactionalId, producerId, producerEpoch, commit, transactionV2));
    }

    @Override
    public CompletableFuture<Optional<TransactionDescription>> describe(String transactionalId) {
        return onShard(transactionalId, c -> CompletableFuture.completedFuture(c.describe(transactionalId)));
    }

    /** Every shard's ids that pass {@code filter}. */
    @Override
    public CompletableFuture<List<TransactionListing>> list(TransactionFilter filter) {
        List<CompletableFuture<List<TransactionListing>>> each = new ArrayList<>();
        for (Slot s : slots) {
            each.add(s.shard.call(() -> s.coordinator.list(filter)));
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<TransactionListing> all = new ArrayList<>();
            each.forEach(f -> all.addAll(f.join()));
            return all;
        });
    }
}
