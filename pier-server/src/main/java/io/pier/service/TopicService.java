package io.pier.service;

import io.pier.common.Agent;
import io.pier.common.Wakeup;
import io.pier.log.LogConfig;
import io.pier.runtime.CommandQueue;
import io.pier.service.Futures;
import io.pier.state.ClusterMetadataStore;
import io.pier.state.TopicMetadata;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;

/**
 * Owner of cluster metadata: topics (names, ids, partitions, configs), dynamic broker configs and
 * group configs. Reads come from an immutable snapshot on any thread. Changes are an agent's
 * work ({@code pier-metadata}): one at a time, each made durable (atomic file replace) on the
 * agent, then the partitions it opens, deletes or reconfigures are commands to their shards; the
 * next change starts when those have answered. Nothing here waits on a future.
 */
public final class TopicService implements Agent {
    private final ClusterMetadataStore store;
    private final PartitionRegistry partitions;
    private final Map<String, String> staticConfigs;
    private final CommandQueue commands;
    /** Changes waiting for the one in progress; agent thread only. */
    private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    private boolean changing;
    private final List<Runnable> topicListeners = new CopyOnWriteArrayList<>();
    /** Everything readers see, published as one object so no reader sees half of a change. */
    private volatile View view;

    private record View(ClusterMetadataStore.Image image, Map<String, TopicMetadata> byName,
            Map<Uuid, TopicMetadata> byId, LogConfig brokerLogDefaults) {}

    /** @param wakeup how a new change wakes the metadata agent's runner */
    TopicService(ClusterMetadataStore store, PartitionRegistry partitions, Map<String, String> staticConfigs,
            Wakeup wakeup) throws IOException {
        this.store = store;
        this.partitions = partitions;
        this.staticConfigs = staticConfigs;
        this.commands = new CommandQueue(1024, wakeup);
        publish(store.load());
    }

    @Override
    public String roleName() {
        return "pier-metadata";
    }

    @Override
    public int doWork(long nowMs) {
        int n = 0;
        Runnable r;
        while (n < 256 && (r = commands.poll()) != null) {
            r.run();
            n++;
        }
        return n;
    }

    /** After the last cycle: no change is taken any more. */
    @Override
    public void onClose() {
        commands.close();
    }

    /**
     * Opens every partition log (recovering it) and removes folders of deleted topics; completes
     * when all of them serve.
     */
    CompletableFuture<Void> openAll() {
        return submit(() -> {
            Set<String> live = new HashSet<>();
            List<CompletableFuture<Partition>> opening = new ArrayList<>();
            for (TopicMetadata t : view.image().topics()) {
                LogConfig config = logConfig(t);
                for (int p = 0; p < t.partitionCount(); p++) {
                    TopicPartition tp = new TopicPartition(t.name(), p);
                    live.add(PartitionRegistry.folderName(tp));
                    opening.add(partitions.open(tp, t.id(), config));
                }
            }
            // Every open, failed or not, has finished before this completes, so none is still
            // running when the caller gives up and closes the registry.
            return allSettled(opening).thenCompose(v -> onAgent(() -> {
                partitions.removeOrphans(live);
                if (!Files.exists(store.file())) {
                    store.save(view.image());
                }
                return null;
            }));
        });
    }

    public String clusterId() {
        return view.image().clusterId();
    }

    public TopicMetadata topic(String name) {
        return view.byName().get(name);
    }

    public TopicMetadata topic(Uuid id) {
        return view.byId().get(id);
    }

    public Collection<TopicMetadata> topics() {
        return view.byName().values();
    }

    public Map<String, String> dynamicBrokerConfigs() {
        return view.image().brokerConfigs();
    }

    public Map<String, Map<String, String>> allGroupConfigs() {
        return view.image().groupConfigs();
    }

    /** Static settings overlaid with dynamic broker overrides. */
    private Map<String, String> overStatic(Map<String, String> dynamic) {
        Map<String, String> all = new LinkedHashMap<>(staticConfigs);
        all.putAll(dynamic);
        return all;
    }

    public LogConfig logConfig(TopicMetadata topic) {
        return LogConfig.withTopicOverrides(view.brokerLogDefaults(), topic.configs());
    }

    /** Called (on any thread) after topics are created, deleted or grow partitions. */
    public void addTopicListener(Runnable listener) {
        topicListeners.add(listener);
    }

    /**
     * A topic's partitions are committed to the metadata before their logs open, one directory
     * each, so a request for two billion of them would fill the disk and the heap, and leave a
     * broker that runs out of memory again on every start. The limit is far above what one broker
     * serves well (each partition is a directory with its own files).
     */
    public static final int MAX_PARTITIONS_PER_TOPIC = 10_000;

    private static void requireAtMostMaxPartitions(int count) {
        if (count > MAX_PARTITIONS_PER_TOPIC) {
            throw new InvalidPartitionsException("Number of partitions " + count + " is above Pier's limit of "
                    + MAX_PARTITIONS_PER_TOPIC + " per topic.");
        }
    }

    public CompletableFuture<TopicMetadata> create(String name, int partitionCount, Map<String, String> configs,
            boolean validateOnly) {
        return submit(() -> {
            Topic.validate(name);
            if (view.byName().containsKey(name)) {
                throw new TopicExistsException("Topic '" + name + "' already exists.");
            }
            if (partitionCount < 1) {
                throw new InvalidPartitionsException("Number of partitions must be larger than 0.");
            }
            requireAtMostMaxPartitions(partitionCount);
            LogConfig.withTopicOverrides(view.brokerLogDefaults(), configs);
            TopicMetadata topic = new TopicMetadata(name, Uuid.randomUuid(), partitionCount, configs);
            if (validateOnly) {
                return CompletableFuture.completedFuture(topic);
            }
            List<TopicMetadata> topics = new ArrayList<>(view.image().topics());
            topics.add(topic);
            commit(withTopics(topics));
            LogConfig config = logConfig(topic);
            List<CompletableFuture<Partition>> opening = new ArrayList<>();
            for (int p = 0; p < partitionCount; p++) {
                opening.add(partitions.open(new TopicPartition(name, p), topic.id(), config));
            }
            return allSettled(opening).thenApply(v -> {
                notifyTopicListeners();
                return topic;
            });
        });
    }

    /**
     * Gateway mode: makes this broker's copy of an upstream topic match it, by name, id and
     * partition count. A topic not known here is created with the upstream's id (so topic ids in
     * share-group requests mean the same on both sides); one with another id (deleted and created
     * again upstream) is replaced; one with fewer partitions grows. Completes with the local topic.
     */
    public CompletableFuture<TopicMetadata> mirror(String name, Uuid id, int partitionCount) {
        TopicMetadata known = view.byName().get(name);
        if (known != null && known.id().equals(id) && known.partitionCount() >= partitionCount) {
            return CompletableFuture.completedFuture(known);
        }
        return submit(() -> {
            TopicMetadata current = view.byName().get(name);
            List<TopicMetadata> topics = new ArrayList<>(view.image().topics());
            int from = 0;
            List<CompletableFuture<Void>> deleting = new ArrayList<>();
            if (current != null && !current.id().equals(id)) {
                topics.remove(current);
                for (int p = 0; p < current.partitionCount(); p++) {
                    deleting.add(partitions.delete(new TopicPartition(name, p)));
                }
            } else if (current != null) {
                if (current.partitionCount() >= partitionCount) {
                    return CompletableFuture.completedFuture(current);
                }
                topics.remove(current);
                from = current.partitionCount();
            }
            requireAtMostMaxPartitions(partitionCount);
            TopicMetadata mirrored = current != null && current.id().equals(id)
                    ? current.withPartitionCount(partitionCount)
                    : new TopicMetadata(name, id, partitionCount, Map.of());
            // Metadata first, as for a deletion; the new partitions open once the old folders are gone.
            topics.add(mirrored);
            commit(withTopics(topics));
            int firstNew = from;
            LogConfig config = logConfig(mirrored);
            return allSettled(deleting).thenCompose(deleted -> {
                List<CompletableFuture<Partition>> opening = new ArrayList<>();
                for (int p = firstNew; p < partitionCount; p++) {
                    opening.add(partitions.open(new TopicPartition(name, p), id, config));
                }
                return allSettled(opening);
            }).thenApply(v -> {
                notifyTopicListeners();
                return mirrored;
            });
        });
    }

    public CompletableFuture<TopicMetadata> delete(String name) {
        return submit(() -> {
            TopicMetadata topic = requireTopic(name);
            List<TopicMetadata> topics = new ArrayList<>(view.image().topics());
            topics.remove(topic);
            // Metadata first: a crash before the folders go leaves orphans, removed at start-up.
            commit(withTopics(topics));
            List<CompletableFuture<Void>> deleting = new ArrayList<>();
            for (int p = 0; p < topic.partitionCount(); p++) {
                deleting.add(partitions.delete(new TopicPartition(name, p)));
            }
            return allSettled(deleting).thenApply(v -> {
                notifyTopicListeners();
                return topic;
            });
        });
    }

    public CompletableFuture<TopicMetadata> createPartitions(String name, int newCount, boolean validateOnly) {
        return submit(() -> {
            TopicMetadata topic = requireTopic(name);
            if (newCount <= topic.partitionCount()) {
                throw new InvalidPartitionsException("Topic currently has " + topic.partitionCount()
                        + " partitions, which is higher than or equal to the requested " + newCount + ".");
            }
            requireAtMostMaxPartitions(newCount);
            if (validateOnly) {
                return CompletableFuture.completedFuture(topic);
            }
            TopicMetadata grown = topic.withPartitionCount(newCount);
            commit(withTopics(replace(topic, grown)));
            LogConfig config = logConfig(grown);
            List<CompletableFuture<Partition>> opening = new ArrayList<>();
            for (int p = topic.partitionCount(); p < newCount; p++) {
                opening.add(partitions.open(new TopicPartition(name, p), grown.id(), config));
            }
            return allSettled(opening).thenApply(v -> {
                notifyTopicListeners();
                return grown;
            });
        });
    }

    public CompletableFuture<TopicMetadata> alterTopicConfigs(String name, Map<String, String> newConfigs,
            boolean validateOnly) {
        return submit(() -> {
            TopicMetadata topic = requireTopic(name);
            LogConfig config = LogConfig.withTopicOverrides(view.brokerLogDefaults(), newConfigs);
            if (validateOnly) {
                return CompletableFuture.completedFuture(topic);
            }
            TopicMetadata changed = topic.withConfigs(newConfigs);
            commit(withTopics(replace(topic, changed)));
            List<CompletableFuture<Void>> updating = new ArrayList<>();
            for (int p = 0; p < changed.partitionCount(); p++) {
                updating.add(partitions.updateConfig(new TopicPartition(name, p), config));
            }
            return allSettled(updating).thenApply(v -> changed);
        });
    }

    /** Replaces the dynamic broker overrides; they become the defaults of every topic. */
    public CompletableFuture<Void> alterBrokerConfigs(Map<String, String> dynamic, boolean validateOnly) {
        return submit(() -> {
            LogConfig defaults = LogConfig.fromBrokerProperties(overStatic(dynamic));
            if (validateOnly) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            ClusterMetadataStore.Image image = view.image();
            commit(image.withBrokerConfigs(dynamic));
            List<CompletableFuture<Void>> updating = new ArrayList<>();
            for (TopicMetadata t : view.image().topics()) {
                LogConfig config = LogConfig.withTopicOverrides(defaults, t.configs());
                for (int p = 0; p < t.partitionCount(); p++) {
                    updating.add(partitions.updateConfig(new TopicPartition(t.name(), p), config));
                }
            }
            return allSettled(updating);
        });
    }

    /** Stores one group's config overrides durably (validation is the caller's). */
    public CompletableFuture<Void> putGroupConfigs(String groupId, Map<String, String> configs) {
        return submit(() -> {
            Map<String, Map<String, String>> groups = new HashMap<>(view.image().groupConfigs());
            if (configs.isEmpty()) {
                groups.remove(groupId);
            } else {
                groups.put(groupId, configs);
            }
            ClusterMetadataStore.Image image = view.image();
            commit(image.withGroupConfigs(groups));
            return CompletableFuture.<Void>completedFuture(null);
        });
    }

    /** Every client quota; the same map until the quotas change (see {@link RateQuotas}). */
    public Map<ClientQuotaEntity, Map<String, Double>> clientQuotas() {
        return view.image().clientQuotas();
    }

    /** The client quotas of the entities {@code filter} matches (DescribeClientQuotas). */
    public Map<ClientQuotaEntity, Map<String, Double>> describeClientQuotas(ClientQuotaFilter filter) {
        return ClientQuotaRules.describe(view.image().clientQuotas(), filter);
    }

    /**
     * AlterClientQuotas: each entity's changes are checked on their own, as Kafka's controller
     * does; those that pass are stored together in one durable write. The result has an entry per
     * entity, empty where it succeeded.
     */
    public CompletableFuture<Map<ClientQuotaEntity, Optional<ApiException>>> alterClientQuotas(
            Collection<ClientQuotaAlteration> alterations, boolean validateOnly) {
        return submit(() -> {
            Map<ClientQuotaEntity, Map<String, Double>> quotas = view.image().clientQuotas();
            Map<ClientQuotaEntity, Optional<ApiException>> results = new LinkedHashMap<>();
            for (ClientQuotaAlteration alteration : alterations) {
                ClientQuotaEntity entity = alteration.entity();
                if (results.containsKey(entity)) {
                    results.put(entity, Optional.of(new InvalidRequestException("Ignoring duplicate entity " + entity)));
                    continue;
                }
                try {
                    quotas = ClientQuotaRules.alter(quotas, entity, changes(alteration));
                    results.put(entity, Optional.empty());
                } catch (InvalidRequestException e) {
                    results.put(entity, Optional.of(e));
                }
            }
            if (!validateOnly && !quotas.equals(view.image().clientQuotas())) {
                commit(view.image().withClientQuotas(quotas));
            }
            return CompletableFuture.completedFuture(results);
        });
    }

    /**
     * A {@link MetadataWriter} write: queued behind the changes before it and run on the agent,
     * off the event loops.
     */
    public <T> CompletableFuture<T> metadataWrite(Callable<T> write) {
        return submit(() -> CompletableFuture.completedFuture(write.call()));
    }

    private static Map<String, Double> changes(ClientQuotaAlteration alteration) {
        Map<String, Double> changes = new HashMap<>();
        for (ClientQuotaAlteration.Op op : alteration.ops()) {
            if (changes.containsKey(op.key())) {
                throw new InvalidRequestException("Duplicate quota key " + op.key()
                        + " not updating quota for this entity " + alteration.entity());
            }
            changes.put(op.key(), op.value()); // null: remove
        }
        return changes;
    }

    private TopicMetadata requireTopic(String name) {
        TopicMetadata topic = view.byName().get(name);
        if (topic == null) {
            throw new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist.");
        }
        return topic;
    }

    private List<TopicMetadata> replace(TopicMetadata old, TopicMetadata updated) {
        List<TopicMetadata> topics = new ArrayList<>(view.image().topics());
        topics.set(topics.indexOf(old), updated);
        return topics;
    }

    private ClusterMetadataStore.Image withTopics(List<TopicMetadata> topics) {
        return view.image().withTopics(topics);
    }

    private void commit(ClusterMetadataStore.Image next) throws IOException {
        store.save(next);
        publish(next);
    }

    private void publish(ClusterMetadataStore.Image next) {
        Map<String, TopicMetadata> names = new HashMap<>();
        Map<Uuid, TopicMetadata> ids = new HashMap<>();
        for (TopicMetadata t : next.topics()) {
            names.put(t.name(), t);
            ids.put(t.id(), t);
        }
        view = new View(next, Map.copyOf(names), Map.copyOf(ids),
                LogConfig.fromBrokerProperties(overStatic(next.brokerConfigs())));
    }

    private void notifyTopicListeners() {
        for (Runnable r : topicListeners) {
            r.run();
        }
    }

    /** One metadata change: its durable part runs on the agent; what it starts elsewhere completes the future. */
    @FunctionalInterface
    private interface Change<T> {
        CompletableFuture<T> apply() throws Exception;
    }

    /** Queues a change; it starts once every earlier change has completed. */
    private <T> CompletableFuture<T> submit(Change<T> change) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            commands.offer(() -> {
                waiting.add(() -> start(change, result));
                startNext();
            });
        } catch (IllegalStateException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** Agent thread only. */
    private void startNext() {
        if (!changing && !waiting.isEmpty()) {
            changing = true;
            waiting.poll().run();
        }
    }

    /** Agent thread only. */
    private <T> void start(Change<T> change, CompletableFuture<T> result) {
        CompletableFuture<T> done;
        try {
            done = change.apply();
        } catch (Exception e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((v, t) -> commands.offer(() -> {
            changing = false;
            if (t != null) {
                result.completeExceptionally(Futures.unwrap(t));
            } else {
                result.complete(v);
            }
            startNext();
        })).exceptionally(Futures.failing(result));
    }

    /** Runs {@code work} back on the agent, inside the change in progress. */
    private <T> CompletableFuture<T> onAgent(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        commands.offer(() -> {
            try {
                result.complete(work.call());
            } catch (Exception e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Completes when all have, failed or not; fails with the first failure. */
    private static CompletableFuture<Void> allSettled(List<? extends CompletableFuture<?>> all) {
        return CompletableFuture.allOf(all.stream().map(f -> f.handle((v, t) -> null))
                .toArray(CompletableFuture[]::new)).thenCompose(v -> CompletableFuture.allOf(
                        all.toArray(CompletableFuture[]::new)));
    }
}
