package io.pier.service;

import io.pier.common.Clock;
import io.pier.log.OffsetAndTimestamp;
import io.pier.log.PartitionLog;
import io.pier.share.SharePartition;
import io.pier.state.SharePartitionKey;
import io.pier.state.SharePersister;
import io.pier.state.ShareState;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live share-partitions of every share group, each owned by the shard of its topic-partition:
 * found or created (from persisted state, or at the start offset {@code share.auto.offset.reset}
 * picks, made durable first) and forgotten there. Every map here is one shard's own; nothing is
 * shared between threads.
 *
 * <pre>
 *   LOADING --(state read, or first start offset durable)--&gt; READY
 *      \--(persister failed)--&gt; FAILED (dropped; the next use tries again)
 * </pre>
 */
final class SharePartitions {
    private static final Logger LOG = LoggerFactory.getLogger(SharePartitions.class);

    private final ShareGroups groups;
    private final SharePersister persister;
    private final Clock clock;
    private final ShareEventsFactory events;
    /** Set while wiring, before the network serves: a gateway replaces the local log with its mirrors. */
    private volatile ShareLogSource source = ShareLogSource.LOCAL;
    /** Per shard id: the share-partitions that shard owns. Each map is touched only on its shard. */
    private final List<Map<SharePartitionKey, Holder>> byShard = new ArrayList<>();
    /**
     * Every key with state in the persister, live or not, for the admin APIs. An index read from
     * any thread, not shard state: it only says which keys exist.
     */
    private final Set<SharePartitionKey> stateKeys = ConcurrentHashMap.newKeySet();

    /** One share-partition of one shard, loading or ready. */
    static final class Holder {
        final Partition partition;
        /** The share fetches parked here, found nothing to acquire. */
        final ShareWaiters waiters;
        /** Ordered by key: the keys of the records past the window read so far, for the next acquisitions. */
        RecordKeyHashes keysAhead;
        private SharePartition ready;
        private Throwable failed;
        private List<Waiter> waiting = new ArrayList<>();

        /** What to run when loading ends: one of the two, never both. */
        private record Waiter(Consumer<SharePartition> then, Consumer<Throwable> orElse) {}

        Holder(Partition partition) {
            this.partition = partition;
            this.waiters = new ShareWaiters(partition);
        }

        /** The share-partition once loaded; null while loading or if loading failed. */
        SharePartition loaded() {
            return ready;
        }

        /** Shard thread only: runs {@code then} (on the shard) once loaded, or {@code orElse} if that failed. */
        void whenReady(Consumer<SharePartition> then, Consumer<Throwable> orElse) {
            if (ready != null) {
                then.accept(ready);
            } else if (failed != null) {
                orElse.accept(failed);
            } else {
                waiting.add(new Waiter(then, orElse));
            }
        }

        private void become(SharePartition sp, Throwable failure) {
            List<Waiter> waiters = waiting;
            waiting = List.of();
            if (failure == null) {
                ready = sp;
                waiters.forEach(w -> w.then().accept(sp));
            } else {
                failed = failure;
                waiters.forEach(w -> w.orElse().accept(failure));
            }
        }
    }

    SharePartitions(ShareGroups groups, SharePersister persister, Clock clock, int shardCount,
            ShareEventsFactory events) {
        this.groups = groups;
        this.persister = persister;
        this.clock = clock;
        this.events = events;
        for (int i = 0; i < shardCount; i++) {
            byShard.add(new HashMap<>());
        }
        stateKeys.addAll(persister.keys());
    }

    void source(ShareLogSource source) {
        this.source = source;
    }

    ShareLogSource source() {
        return source;
    }

    /** The share-partitions of a group that have state, by topic id then partition. */
    List<SharePartitionKey> stateKeys(String groupId) {
        List<SharePartitionKey> keys = new ArrayList<>();
        for (SharePartitionKey key : stateKeys) {
            if (key.groupId().equals(groupId)) {
                keys.add(key);
            }
        }
        keys.sort(Comparator.comparing(SharePartitionKey::topicId).thenComparingInt(SharePartitionKey::partition));
        return keys;
    }

    void addStateKey(SharePartitionKey key) {
        stateKeys.add(key);
    }

    void removeStateKey(SharePartitionKey key) {
        stateKeys.remove(key);
    }

    private Map<SharePartitionKey, Holder> owned(Shard shard) {
        return byShard.get(shard.id());
    }

    /** Shard thread only: the holder of {@code key}, or null when not live and {@code create} is false. */
    Holder holder(Partition partition, SharePartitionKey key, boolean create) {
        Map<SharePartitionKey, Holder> owned = owned(partition.shard());
        Holder h = owned.get(key);
        if (h != null || !create) {
            return h;
        }
        Holder created = new Holder(partition);
        owned.put(key, created);
        if (persister.serves(key)) {
            stateKeys.add(key); // not a share-partition another gateway node serves, asked for here by mistake
        }
        load(partition, key, created);
        return created;
    }

    /**
     * Runs {@code work} on the partition's shard with its share-partition, loading it first;
     * completes with {@code absent} when {@code create} is false and it is not live.
     */
    <T> CompletableFuture<T> with(Partition partition, SharePartitionKey key, boolean create, T absent,
            ShareWork<T> work) {
        CompletableFuture<T> out = new CompletableFuture<>();
        try {
            partition.shard().execute(() -> {
                Holder h = holder(partition, key, create);
                if (h == null) {
                    out.complete(absent);
                    return;
                }
                h.whenReady(sp -> {
                    try {
                        Futures.forward(work.run(h, sp), out);
                    } catch (Exception e) {
                        out.completeExceptionally(e);
                    }
                }, out::completeExceptionally);
            });
        } catch (RuntimeException e) {
            out.completeExceptionally(e);
        }
        return out;
    }

    /** Work on a loaded share-partition, on its shard. */
    @FunctionalInterface
    interface ShareWork<T> {
        CompletableFuture<T> run(Holder holder, SharePartition sp) throws Exception;
    }

    private void load(Partition partition, SharePartitionKey key, Holder holder) {
        Shard shard = partition.shard();
        if (!persister.serves(key)) {
            // A gateway node asked for a partition whose state another node serves: the client is
            // told NOT_LEADER_OR_FOLLOWER, reads its metadata again, and keeps the partition in its
            // share session, which this node serves once the state comes here.
            owned(shard).remove(key, holder);
            holder.become(null, new NotLeaderOrFollowerException("the share state of " + key
                    + " is served by another gateway node"));
            return;
        }
        try {
            ShareState stored = persister.read(key);
            LOG.debug("Loading share-partition {} ({})", key, stored == null ? "new" : "start " + stored.startOffset());
            if (stored != null && stored.startOffset() >= 0) {
                // A gateway node that has just started (or just took over the state partition)
                // may not have read the group's settings yet: loaded without them, a group ordered
                // by key would hand out later records of a key before earlier ones.
                onShard(shard, thenOnShard(shard, source.groupSettingsApplied(),
                        v -> source.cover(partition, stored.startOffset())), t -> {
                    if (t != null) {
                        fail(partition, key, holder, t);
                        return;
                    }
                    holder.become(SharePartition.load(key, stored, () -> groups.shareConfig(key.groupId()),
                            events.create(key, partition), shard.nowMs()), null);
                    LOG.debug("Share-partition {} loaded", key);
                });
                return;
            }
            // The first start offset must be durable before any record is handed out, or a
            // restart would pick a new one and silently skip or repeat the backlog. The
            // share-partition is built back on its shard, never on the persister's thread.
            // handle, not whenComplete: a failed initialization must reach fail() on the shard,
            // not the "shard stopped" branch below.
            thenOnShard(shard, source.initialStartOffset(partition,
                            () -> groups.config(key.groupId()).effectiveAutoOffsetReset(), clock.wallMs()),
                            start -> source.cover(partition, start).thenApply(v -> start))
                    .thenCompose(start -> persister.initialize(key, start).thenApply(v -> start))
                    .handle((start, t) -> {
                        shard.execute(() -> {
                            if (t != null) {
                                fail(partition, key, holder, t);
                                return;
                            }
                            ShareState created = persister.read(key);
                            int epoch = created == null ? 0 : created.stateEpoch();
                            holder.become(SharePartition.fresh(key, epoch, start,
                                    () -> groups.shareConfig(key.groupId()), events.create(key, partition)), null);
                            LOG.debug("Share-partition {} created at {}", key, start);
                        });
                        return null;
                    }).exceptionally(t -> {
                        // The shard stopped before the share-partition could be built: the broker is closing.
                        LOG.warn("Share-partition {} not built: {}", key, t.toString());
                        return null;
                    });
        } catch (Exception e) {
            fail(partition, key, holder, e);
        }
    }

    /**
     * Runs {@code then} on the shard once {@code step} is done: at once when it already is (a
     * broker's own log), else from the shard's queue.
     */
    private static void onShard(Shard shard, CompletableFuture<Void> step, Consumer<Throwable> then) {
        if (step.isDone()) {
            then.accept(step.handle((v, t) -> t).join());
            return;
        }
        var unused = step.whenComplete((v, t) -> shard.execute(() -> then.accept(t)));
    }

    /**
     * {@code next} with {@code step}'s result, run on the shard as the source's calls ask (a
     * gateway's {@link ShareLogSource#cover} restarts the partition's log): at once when
     * {@code step} is already done, this being the shard's turn, else from the shard's queue, never
     * on the thread that completed {@code step} (the gateway's upstream client). Run there, a
     * mirror's restart deleted the segment a mirrored append on the shard was writing, and the
     * node stopped on the closed file (GatewayNemesisIT).
     */
    private static <T, U> CompletableFuture<U> thenOnShard(Shard shard, CompletableFuture<T> step,
            Function<T, CompletableFuture<U>> next) {
        if (step.isDone()) {
            return step.thenCompose(next);
        }
        return step.thenCompose(v -> shard.compose(() -> next.apply(v)));
    }

    private void fail(Partition partition, SharePartitionKey key, Holder holder, Throwable t) {
        if (Futures.unwrap(t) instanceof NotLeaderOrFollowerException) {
            // A gateway node that stopped serving its state partition meanwhile: the client is told so.
            LOG.debug("Share-partition {} is not served here: {}", key, t.toString());
        } else {
            LOG.warn("Loading share state of {} failed", key, t);
        }
        owned(partition.shard()).remove(key, holder);
        holder.become(null, t);
    }

    /**
     * Removes the live share-partition, whichever shard has it, so the next use loads or creates it
     * again; {@code onForgotten} runs for it on that shard.
     */
    CompletableFuture<Void> forget(Shard[] shards, SharePartitionKey key, Consumer<Holder> onForgotten) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Shard shard : shards) {
            all.add(shard.call(() -> {
                Holder h = owned(shard).remove(key);
                if (h != null) {
                    onForgotten.accept(h);
                    h.waiters.wakeAll(); // to load it again, or find it gone
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /**
     * Drops every share-partition {@code moved} names from every shard, and from the admin index,
     * without writing anything: its state is served elsewhere now.
     */
    CompletableFuture<Void> forgetIf(Shard[] shards, Predicate<SharePartitionKey> moved) {
        stateKeys.removeIf(moved);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Shard shard : shards) {
            all.add(shard.call(() -> {
                owned(shard).entrySet().removeIf(e -> {
                    if (moved.test(e.getKey())) {
                        e.getValue().waiters.wakeAll(); // to be told where it went
                        return true;
                    }
                    return false;
                });
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /**
     * Shard thread only: for each partition of {@code shard} with share-partitions here, the
     * lowest start offset among them; -1 while one of them is loading (its start is not known yet).
     */
    Map<Partition, Long> lowestStarts(Shard shard) {
        Map<Partition, Long> out = new HashMap<>();
        for (Holder h : owned(shard).values()) {
            SharePartition sp = h.loaded();
            long start = sp == null ? -1 : sp.startOffset();
            out.merge(h.partition, start, (a, b) -> a < 0 || b < 0 ? -1 : Math.min(a, b));
        }
        return out;
    }

    /**
     * Shard thread only: if records of {@code sp} became acquirable since the last call, wakes one
     * fetch parked on it (which passes on what it leaves).
     */
    void wakeIfAcquirable(Partition partition, SharePartition sp) {
        if (sp.consumeStateChanged()) {
            Holder h = owned(partition.shard()).get(sp.key());
            if (h != null) {
                h.waiters.wakeOne();
            }
        }
    }

    /** Shard thread only: each loaded share-partition {@code shard} owns, with its partition. */
    void forEachLoaded(Shard shard, BiConsumer<Partition, SharePartition> action) {
        for (Holder h : owned(shard).values()) {
            SharePartition sp = h.loaded();
            if (sp != null) {
                action.accept(h.partition, sp);
            }
        }
    }
}
