package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.OffsetExpiration;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import io.pier.metrics.PierMetrics;
import io.pier.runtime.AgentHost;
import io.pier.runtime.AgentSlot;
import io.pier.state.ClusterMetadataStore;
import io.pier.log.FileIO;
import io.pier.state.DurableOffsetStore;
import io.pier.state.DurableTransactionStore;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateStore;
import io.pier.state.TopicMetadata;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shards of one broker and the services that run on them, built, started and stopped
 * together. The protocol layer sees only the services' commands ({@link Logs}, {@link ShareService},
 * ...); the shards, partitions and their logs stay in here.
 *
 * <p>Wiring order: shards are built with their duty steps (lock expiry, group session expiry,
 * retention, committed-offset expiry, metrics) before any agent starts, so a step list never
 * changes under a running shard. Each shard has its own {@link Flusher} agent, which does its
 * fsyncs. The agents run on an {@link AgentHost}: threads in a broker, by hand in a test.
 */
public final class BrokerServices implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerServices.class);
    /** Folder of the committed-offset log inside the data folder. */
    /** How often a gateway's mirrors lose what no share-partition needs (a cheap pass over memory). */
    private static final long MIRROR_TRIM_INTERVAL_MS = 10_000;
    static final String OFFSETS_DIR = "consumer-offsets";
    static final String TRANSACTIONS_DIR = "transaction-state";

    /**
     * What the services need from the broker's configuration.
     *
     * @param io how the partition logs and the offset and transaction stores open their segment
     *     files: {@link FileIO#REAL}, or a fault-injecting layer in tests
     */
    public record Settings(Path dataDir, int shardCount, Map<String, String> raw, long retentionCheckIntervalMs,
            ShareGroupBrokerConfig shareConfig, boolean durableDeliveryCounts, long metricsSnapshotIntervalMs,
            FileIO io) {
        /** On real files. */
        public Settings(Path dataDir, int shardCount, Map<String, String> raw, long retentionCheckIntervalMs,
                ShareGroupBrokerConfig shareConfig, boolean durableDeliveryCounts, long metricsSnapshotIntervalMs) {
            this(dataDir, shardCount, raw, retentionCheckIntervalMs, shareConfig, durableDeliveryCounts,
                    metricsSnapshotIntervalMs, FileIO.REAL);
        }
    }

    private final Shard[] shards;
    private final SharePartitions live;
    private final PartitionRegistry partitions;
    private final TopicService topics;
    private final Logs logs;
    private final LogDirs logDirs;
    private final Polls polls;
    private final ShareGroups shareGroups;
    private final ConsumerGroups consumerGroups;
    private final DurableOffsetStore offsetStore;
    private final DurableTransactionStore transactionStore;
    private final Transactions transactions;
    private final ShareSessions shareSessions;
    private final ShareService shares;
    private final DeadLetters deadLetters;
    private final ShareOffsets shareOffsets;
    private final ShareStateStore store;
    private final ProducerIdAllocator producerIds;
    private final Deque<AgentSlot> slots = new ArrayDeque<>();

    /**
     * Builds the services and starts their agents on {@code host}; {@link #open} then opens the
     * partition logs.
     *
     * @param shareState the share-state persister, also the record of which share groups exist
     * @param metrics where share-partitions and logs report; null when metrics are off
     * @param fatal told when a shard cannot go on (a failed fsync)
     */
    public BrokerServices(Settings settings, Clock clock, AgentHost host, ShareStateStore shareState,
            PierMetrics metrics, Shard.FatalErrorHandler fatal) throws IOException {
        Path dataDir = settings.dataDir();
        // Committed offsets: their own record log and agent, started first so it stops last, after
        // the shards that submit to it.
        AgentSlot offsetSlot = host.slot();
        offsetStore = DurableOffsetStore.open(dataDir.resolve(OFFSETS_DIR),
                DurableOffsetStore.Options.fromProperties(settings.raw()), clock, settings.io(), offsetSlot.wakeup(),
                fatal::onFatal);
        offsetSlot.start(offsetStore);
        slots.push(offsetSlot);
        // Transaction state: the same, in a log of its own.
        AgentSlot txnSlot = host.slot();
        transactionStore = DurableTransactionStore.open(dataDir.resolve(TRANSACTIONS_DIR),
                DurableTransactionStore.Options.DEFAULTS, clock, settings.io(), txnSlot.wakeup(), fatal::onFatal);
        txnSlot.start(transactionStore);
        slots.push(txnSlot);
        shards = new Shard[settings.shardCount()];
        AgentSlot[] shardSlots = new AgentSlot[shards.length];
        AgentSlot[] flusherSlots = new AgentSlot[shards.length];
        Flusher[] flushers = new Flusher[shards.length];
        for (int i = 0; i < shards.length; i++) {
            shardSlots[i] = host.slot();
            flusherSlots[i] = host.slot();
            flushers[i] = new Flusher(i, flusherSlots[i].wakeup());
            shards[i] = new Shard(i, shardSlots[i].wakeup(), fatal, flushers[i]);
        }
        partitions = new PartitionRegistry(dataDir, shards, clock, settings.io());
        AgentSlot metadataSlot = host.slot();
        topics = new TopicService(new ClusterMetadataStore(dataDir, settings.io()), partitions, settings.raw(),
                metadataSlot.wakeup());
        logs = new Logs(partitions);
        logDirs = new LogDirs(dataDir, partitions);
        polls = new Polls(partitions, metrics == null ? LongPoll.Answers.NONE
                : (api, outcome) -> metrics.onLongPollAnswer(api, outcome.label()));
        // Release backoffs are kept in wall-clock time on disk, monotonic time in the engine.
        store = new BackoffClockStore(shareState, clock);
        shareGroups = new ShareGroups(partitions, topics, settings.shareConfig(),
                ConsumerGroupBrokerConfig.fromProperties(settings.raw()), store);
        consumerGroups = new ConsumerGroups(partitions, topics, shareGroups, offsetStore, clock, settings.raw());
        ShareEventsFactory events = metrics == null ? ShareEventsFactory.NONE : ShareEventsFactory.metrics(metrics);
        live = new SharePartitions(shareGroups, store, clock, shards.length, events);
        shares = new ShareService(shareGroups, store, partitions, live, clock, settings.durableDeliveryCounts());
        shareOffsets = new ShareOffsets(store, partitions, live, events);
        deadLetters = new DeadLetters(shareGroups, store, live, DeadLetterQueues.local(topics, logs), clock,
                Integer.parseInt(settings.raw().getOrDefault("num.partitions", "1").trim()));
        shareSessions = new ShareSessions(partitions, settings.shareConfig().maxShareSessions(),
                this::releaseSession);
        producerIds = new ProducerIdAllocator(dataDir, partitions.shardForKey("__producer_ids"), settings.io());
        transactions = new Transactions(partitions, topics, logs, consumerGroups, transactionStore, producerIds, clock,
                settings.raw());
        GroupSnapshots groupSnapshots = new GroupSnapshots(partitions, consumerGroups, shareGroups, offsetStore);
        OffsetExpiration.Config offsetRetention = OffsetExpiration.Config.fromProperties(settings.raw());
        for (Shard shard : shards) {
            shard.addStep(shares.lockExpiry(shard));
            shard.addStep(deadLetters.step(shard));
            shard.addStep(shareGroups.sessionExpiry(shard));
            shard.addStep(RetentionStep.step(shard, partitions, settings.retentionCheckIntervalMs()));
            shard.addStep(MirrorTrimStep.step(shard, partitions, live,
                    Math.min(MIRROR_TRIM_INTERVAL_MS, settings.retentionCheckIntervalMs())));
            shard.addStep(consumerGroups.offsetExpiry(shard, offsetRetention));
            if (metrics != null) {
                shard.addStep(MetricsSnapshotStep.step(shard, partitions, live, groupSnapshots, metrics,
                        settings.metricsSnapshotIntervalMs()));
            }
            shard.addCloseHook(() -> partitions.closeOwned(shard));
        }
        for (int i = 0; i < shards.length; i++) {
            shardSlots[i].start(shards[i]);
            slots.push(shardSlots[i]);
        }
        // Stopped before the shards: a stopping flusher forces what it holds and answers, so the
        // shards hear of every flush in flight; what they append after that they force themselves.
        for (int i = 0; i < shards.length; i++) {
            flusherSlots[i].start(flushers[i]);
            slots.push(flusherSlots[i]);
        }
        // Stopped first (last in), so no topic change is half-way while the shards stop.
        metadataSlot.start(topics);
        slots.push(metadataSlot);
    }

    /** Opens (recovering) every partition log; completes when all serve, or with the first failure. */
    public CompletableFuture<Void> open() {
        return topics.openAll().thenRun(() -> resumeDeadLetters(store.keys()));
    }

    /**
     * Loads every share-partition whose stored state holds records waiting for their dead letter
     * (ARCHIVING), so their letters are written after a restart without waiting for a consumer to
     * fetch there.
     */
    private void resumeDeadLetters(java.util.Collection<SharePartitionKey> keys) {
        // A gateway node serves no state partition yet when its logs open: it resumes the letters
        // of those it takes over (shareStateTaken).
        for (SharePartitionKey key : keys) {
            ShareState state = store.serves(key) ? store.read(key) : null;
            if (state == null || state.batches().stream().noneMatch(b -> b.state() == PersistedBatch.ARCHIVING)) {
                continue;
            }
            TopicMetadata topic = topics.topic(key.topicId());
            if (topic != null && key.partition() < topic.partitionCount()) {
                shares.preload(new TopicPartition(topic.name(), key.partition()), key);
            }
        }
    }

    /** A share session ended: what its member still holds goes back to the others at once. */
    private void releaseSession(ShareSessions.Session session) {
        for (ShareSessions.PartitionRef ref : session.partitions()) {
            TopicMetadata topic = topics.topic(ref.topicId());
            if (topic != null) {
                shares.releaseMember(new TopicPartition(topic.name(), ref.partition()),
                        new SharePartitionKey(session.key().groupId(), ref.topicId(), ref.partition()),
                        session.key().memberId());
            }
        }
    }

    /**
     * Where share-partitions read their records: a gateway's mirrors of upstream partitions in
     * place of the broker's own logs. Call while wiring, before the network serves.
     */
    public void shareLogSource(ShareLogSource source) {
        live.source(source);
    }

    /**
     * Where dead letters go: a gateway's upstream topics in place of the broker's own. Call while
     * wiring, before the network serves.
     */
    public void deadLetterQueues(DeadLetterQueues queues) {
        deadLetters.queues(queues);
    }

    /**
     * Gateway: this node now serves the state of {@code keys} and the existence of {@code groups}
     * (a state partition it took over): the admin APIs list them from now on, the groups are
     * known (Empty until their members come), each share-partition loads when first used, or at
     * once if it holds records waiting for their dead letters (their node died between the letters
     * and ARCHIVED), whose letters are then looked up and written without waiting for a consumer.
     */
    public CompletableFuture<Void> shareStateTaken(java.util.Set<SharePartitionKey> keys, java.util.Set<String> groups) {
        keys.forEach(live::addStateKey);
        return shareGroups.restoreGroups(groups).thenRun(() -> resumeDeadLetters(keys));
    }

    /**
     * Gateway: this node no longer serves the share-partitions of the topic-partitions
     * {@code moved} names, by topic id and partition, nor coordinates the share groups
     * {@code movedGroups} names (another node takes their state over): they are dropped from
     * memory without writing anything, and the share sessions that held any of the share-partitions
     * end, so their members learn where to go.
     */
    public CompletableFuture<Void> shareStateReleased(java.util.function.BiPredicate<Uuid, Integer> moved,
            java.util.function.Predicate<String> movedGroups) {
        CompletableFuture<Void> forgotten = live.forgetIf(shards, k -> moved.test(k.topicId(), k.partition()));
        CompletableFuture<Void> ended = shareSessions.endSessionsWith(ref -> moved.test(ref.topicId(), ref.partition()));
        CompletableFuture<Void> groups = shareGroups.releaseGroups(movedGroups);
        return CompletableFuture.allOf(forgotten, ended, groups);
    }

    public TopicService topics() {
        return topics;
    }

    public Logs logs() {
        return logs;
    }

    public LogDirs logDirs() {
        return logDirs;
    }

    public Polls polls() {
        return polls;
    }

    public ShareGroups shareGroups() {
        return shareGroups;
    }

    public ConsumerGroups consumerGroups() {
        return consumerGroups;
    }

    /** For tests in this package: the committed-offset store. */
    DurableOffsetStore offsetStore() {
        return offsetStore;
    }

    public ShareSessions shareSessions() {
        return shareSessions;
    }

    public ShareService shares() {
        return shares;
    }

    public ShareOffsets shareOffsets() {
        return shareOffsets;
    }

    public Transactions transactions() {
        return transactions;
    }

    public ProducerIdAllocator producerIds() {
        return producerIds;
    }

    /** For tests in this package: where partitions and coordinator keys live. */
    PartitionRegistry partitions() {
        return partitions;
    }

    public int shardCount() {
        return shards.length;
    }

    /**
     * Stops the metadata agent, then the flushers (each forcing what it still holds), then each
     * shard after the commands already queued; a stopping shard closes its partitions' logs.
     */
    @Override
    public void close() {
        while (!slots.isEmpty()) {
            try {
                slots.pop().close();
            } catch (RuntimeException e) {
                LOG.warn("Stopping a broker agent failed", e);
            }
        }
    }
}
