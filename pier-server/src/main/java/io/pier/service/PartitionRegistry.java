package io.pier.service;

import io.pier.common.Clock;
import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the {@link Partition} for a topic-partition from any thread, and creates or deletes
 * partitions on their owning shard. Logs live in {@code <data>/logs/<topic>-<partition>/}.
 */
public final class PartitionRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionRegistry.class);
    private static final String DELETED_SUFFIX = ".deleted";
    /** Kafka's default {@code offsets.topic.num.partitions}. */
    private static final int COORDINATOR_PARTITIONS = 50;

    private final Path logsDir;
    private final Shard[] shards;
    private final Clock clock;
    private final FileIO io;
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();

    PartitionRegistry(Path dataDir, Shard[] shards, Clock clock, FileIO io) throws IOException {
        this.logsDir = dataDir.resolve("logs");
        this.shards = shards;
        this.clock = clock;
        this.io = io;
        AtomicFiles.createDirectories(io, logsDir);
    }

    public Partition get(TopicPartition tp) {
        return partitions.get(tp);
    }

    /** Shard thread only: each partition {@code shard} owns that is not deleted. */
    void forEachOwned(Shard shard, Consumer<Partition> action) {
        for (Partition p : partitions.values()) {
            if (p.shard() == shard && !p.isDeleted()) {
                action.accept(p);
            }
        }
    }

    Shard shardFor(TopicPartition tp) {
        return shards[Math.floorMod(tp.hashCode(), shards.length)];
    }

    /**
     * The shard that owns a coordinator key (a group id; later a transactional id). Kafka maps a
     * group to one of the 50 partitions of {@code __consumer_offsets} by the key's hash; Pier
     * places that partition like any other, so a group always lands on the shard its offsets
     * partition would live on.
     */
    Shard shardForKey(String key) {
        int offsetsPartition = Utils.abs(key.hashCode()) % COORDINATOR_PARTITIONS;
        return shardFor(new TopicPartition(Topic.GROUP_METADATA_TOPIC_NAME, offsetsPartition));
    }

    /** Every shard, in id order. */
    Shard[] shards() {
        return shards.clone();
    }

    /** Removes folders of deleted topics, including those left by a crash mid-delete. */
    void removeOrphans(Set<String> liveFolderNames) throws IOException {
        try (Stream<Path> dirs = Files.list(logsDir)) {
            for (Path dir : dirs.collect(Collectors.toList())) {
                if (!liveFolderNames.contains(dir.getFileName().toString())) {
                    LOG.info("Removing log folder of a deleted topic: {}", dir.getFileName());
                    deleteRecursively(dir);
                }
            }
        }
    }

    static String folderName(TopicPartition tp) {
        return tp.topic() + "-" + tp.partition();
    }

    /** Opens (recovering) or creates the log on its shard; completes when it serves. */
    CompletableFuture<Partition> open(TopicPartition tp, Uuid topicId, LogConfig config) {
        Shard shard = shardFor(tp);
        return shard.call(() -> {
            PartitionLog log = PartitionLog.open(logsDir.resolve(folderName(tp)), config, clock, io);
            Partition p = new Partition(tp, topicId, shard, log);
            partitions.put(tp, p);
            return p;
        });
    }

    CompletableFuture<Void> updateConfig(TopicPartition tp, LogConfig config) {
        Partition p = partitions.get(tp);
        if (p == null) {
            return CompletableFuture.completedFuture(null);
        }
        return p.shard().call(() -> {
            p.log().updateConfig(config);
            return null;
        });
    }

    /**
     * Deletes the partition on its shard: readers and appends see it gone at once; its files go
     * once the flush in flight, if any, is back (the flusher may still write in the folder, and a
     * partition created again under the same name must not meet its files).
     */
    CompletableFuture<Void> delete(TopicPartition tp) {
        Partition p = partitions.remove(tp);
        if (p == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> deleted = new CompletableFuture<>();
        try {
            p.shard().execute(() -> {
                p.markDeleted();
                p.shard().retire(p.log(), () -> {
                    try {
                        removeFiles(p);
                        deleted.complete(null);
                    } catch (IOException | RuntimeException e) {
                        deleted.completeExceptionally(e);
                    }
                });
            });
        } catch (RuntimeException e) {
            deleted.completeExceptionally(e);
        }
        return deleted;
    }

    private void removeFiles(Partition p) throws IOException {
        p.log().close();
        TopicPartition tp = p.topicPartition();
        Path dir = logsDir.resolve(folderName(tp));
        Path tomb = logsDir.resolve(folderName(tp) + "." + Uuid.randomUuid() + DELETED_SUFFIX);
        io.move(dir, tomb);
        io.syncDirectory(logsDir);
        deleteRecursively(tomb);
    }

    private void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            List<Path> paths = walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).collect(Collectors.toList());
            for (Path path : paths) {
                io.deleteIfExists(path);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Shard thread only, as the shard stops: closes the logs of the partitions it owns. */
    void closeOwned(Shard shard) {
        for (Partition p : partitions.values()) {
            if (p.shard() == shard) {
                try {
                    p.log().close();
                } catch (RuntimeException e) {
                    LOG.warn("Closing {} failed", p.topicPartition(), e);
                }
                partitions.remove(p.topicPartition(), p);
            }
        }
    }
}
