package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.metrics.PierMetrics;
import io.pier.runtime.AgentRunner;
import io.pier.state.ClusterMetadataStore;
import io.pier.state.DurableSharePersister;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shards of one broker and the services that run on them, built, started and stopped
 * together. The protocol layer sees only the services' commands ({@link Logs}, {@link ShareService},
 * ...); the shards, partitions and their logs stay in here.
 *
 * <p>Wiring order: shards are built with their duty steps (lock expiry, group session expiry,
 * retention, metrics) before any runner starts, so a step list never changes under a running shard.
 */
public final class BrokerServices implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerServices.class);

    /** What the services need from the broker's configuration. */
    public record Settings(Path dataDir, int shardCount, Map<String, String> raw, long retentionCheckIntervalMs,
            ShareGroupBrokerConfig shareConfig, boolean durableDeliveryCounts, long metricsSnapshotIntervalMs) {}

    private final Shard[] shards;
    private final AgentRunner[] runners;
    private final AgentRunner metadataRunner;
    private final PartitionRegistry partitions;
    private final TopicService topics;
    private final Logs logs;
    private final Polls polls;
    private final ShareGroups shareGroups;
    private final ShareSessions shareSessions;
    private final ShareService shares;
    private final ShareOffsets shareOffsets;
    private final ProducerIdAllocator producerIds;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();

    /**
     * Builds and starts the services, opening (recovering) every partition log.
     *
     * @param shareState the share-state persister, also the record of which share groups exist
     * @param metrics where share-partitions and logs report; null when metrics are off
     * @param fatal told when a shard cannot go on (a failed fsync, a broken duty cycle)
     */
    public BrokerServices(Settings settings, Clock clock, DurableSharePersister shareState, PierMetrics metrics,
            Shard.FatalErrorHandler fatal) throws Exception {
        Path dataDir = settings.dataDir();
        try {
            shards = new Shard[settings.shardCount()];
            runners = new AgentRunner[shards.length];
            for (int i = 0; i < shards.length; i++) {
                runners[i] = new AgentRunner(clock, (agent, cause) -> fatal.onFatal(agent + " failed", cause));
                shards[i] = new Shard(i, runners[i].wakeup(), fatal);
            }
            partitions = new PartitionRegistry(dataDir, shards, clock);
            metadataRunner = new AgentRunner(clock, (agent, cause) -> fatal.onFatal(agent + " failed", cause));
            topics = new TopicService(new ClusterMetadataStore(dataDir), partitions, settings.raw(),
                    metadataRunner.wakeup());
            logs = new Logs(partitions);
            polls = new Polls(partitions);
            shareGroups = new ShareGroups(partitions, topics, settings.shareConfig(), shareState);
            ShareEventsFactory events = metrics == null ? ShareEventsFactory.NONE : ShareEventsFactory.metrics(metrics);
            SharePartitions live = new SharePartitions(shareGroups, shareState, clock, shards.length, events);
            shares = new ShareService(shareGroups, shareState, partitions, live, settings.durableDeliveryCounts());
            shareOffsets = new ShareOffsets(shareState, partitions, live, events);
            shareSessions = new ShareSessions(partitions, settings.shareConfig().maxShareSessions(),
                    this::releaseSession);
            producerIds = new ProducerIdAllocator(dataDir, partitions.shardForKey("__producer_ids"));
            for (Shard shard : shards) {
                shard.addStep(shares.lockExpiry(shard));
                shard.addStep(shareGroups.sessionExpiry(shard));
                shard.addStep(RetentionTicker.step(shard, partitions, settings.retentionCheckIntervalMs()));
                if (metrics != null) {
                    shard.addStep(MetricsTicker.step(shard, partitions, live, metrics,
                            settings.metricsSnapshotIntervalMs()));
                }
            }
            for (int i = 0; i < shards.length; i++) {
                runners[i].start(shards[i]);
                started.push(stopper(shards[i], runners[i]));
            }
            metadataRunner.start(topics);
            started.push(() -> {
                topics.stop();
                metadataRunner.close();
            });
            started.push(partitions);
            topics.openAll().get();
        } catch (ExecutionException e) {
            close();
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /** Runs what is already queued on the shard, then stops its thread. */
    private static AutoCloseable stopper(Shard shard, AgentRunner runner) {
        return () -> {
            try {
                shard.call(() -> null).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("{} did not drain in time", shard.roleName());
            }
            shard.stop();
            runner.close();
        };
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

    public TopicService topics() {
        return topics;
    }

    public Logs logs() {
        return logs;
    }

    public Polls polls() {
        return polls;
    }

    public ShareGroups shareGroups() {
        return shareGroups;
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

    public ProducerIdAllocator producerIds() {
        return producerIds;
    }

    public int shardCount() {
        return shards.length;
    }

    /** Closes the logs (on their shards), then stops the metadata agent, then the shards. */
    @Override
    public void close() {
        while (!started.isEmpty()) {
            try {
                started.pop().close();
            } catch (Exception e) {
                LOG.warn("Stopping a broker service failed", e);
            }
        }
    }
}
