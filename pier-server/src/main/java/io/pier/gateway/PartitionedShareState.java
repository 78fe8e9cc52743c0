package io.pier.gateway;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;

import io.pier.state.ShareState;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareStateStore;
import io.pier.state.ShareStateWrite;

/**
 * A gateway's share state, spread over the partitions of its state topic on the upstream: each
 * share-partition's state lives in the state partition of its topic-partition (so every share
 * group of one topic-partition is served by the same node, its leader for clients), and each
 * share group's existence in the state partition of its id (so its coordinator is the node that
 * owns that partition). This node serves the state partitions it owns, each a
 * {@link io.pier.state.DurableSharePersister} over a {@link KafkaShareStateLog}; a key of another
 * partition is not this node's: a write to it fails, a read finds nothing.
 */
final class PartitionedShareState implements ShareStateStore {
    private final int partitions;
    private final Map<Integer, ShareStateStore> owned = new ConcurrentHashMap<>();

    PartitionedShareState(int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("state partitions must be at least 1");
        }
        this.partitions = partitions;
    }

    /** The state partition of a topic-partition's share-partitions. */
    static int partitionOf(Uuid topicId, int partition, int partitions) {
        return Math.floorMod(31 * topicId.hashCode() + partition, partitions);
    }

    /** The state partition of a share group's existence, and so of its coordinator. */
    static int partitionOf(String groupId, int partitions) {
        return Math.floorMod(groupId.hashCode(), partitions);
    }

    int partitions() {
        return partitions;
    }

    /** This node now serves {@code partition} from {@code store}. */
    void own(int partition, ShareStateStore store) {
        owned.put(partition, store);
    }

    /** This node no longer serves {@code partition}; returns its store to close, or null. */
    ShareStateStore disown(int partition) {
        return owned.remove(partition);
    }

    boolean owns(int partition) {
        return owned.containsKey(partition);
    }

    private ShareStateStore of(SharePartitionKey key) {
        return owned.get(partitionOf(key.topicId(), key.partition(), partitions));
    }

    private ShareStateStore of(String groupId) {
        return owned.get(partitionOf(groupId, partitions));
    }

    private static <T> CompletableFuture<T> notOwned(Object what) {
        return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("the share state of " + what
                + " is not served by this gateway node"));
    }

    @Override
    public boolean serves(SharePartitionKey key) {
        return of(key) != null;
    }

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        ShareStateStore s = of(write.key());
        return s == null ? notOwned(write.key()) : s.write(write);
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        ShareStateStore s = of(key);
        return s == null ? null : s.read(key);
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        ShareStateStore s = of(key);
        return s == null ? notOwned(key) : s.initialize(key, startOffset);
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        ShareStateStore s = of(key);
        return s == null ? notOwned(key) : s.delete(key);
    }

    @Override
    public Set<SharePartitionKey> keys() {
        Set<SharePartitionKey> all = new HashSet<>();
        owned.values().forEach(s -> all.addAll(s.keys()));
        return all;
    }

    @Override
    public CompletableFuture<Void> recordGroup(String groupId) {
        ShareStateStore s = of(groupId);
        return s == null ? notOwned("group " + groupId) : s.recordGroup(groupId);
    }

    @Override
    public CompletableFuture<Void> deleteGroup(String groupId) {
        ShareStateStore s = of(groupId);
        return s == null ? notOwned("group " + groupId) : s.deleteGroup(groupId);
    }

    @Override
    public Set<String> groups() {
        Set<String> all = new HashSet<>();
        owned.values().forEach(s -> all.addAll(s.groups()));
        return all;
    }
}
