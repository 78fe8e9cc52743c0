package io.pier.service;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * The broker's log directories as DescribeLogDirs and AlterReplicaLogDirs see them. Pier keeps
 * all its data in one folder ({@code log.dirs} names exactly one), so there is one log directory,
 * holding every partition, and a partition can never move to another.
 *
 * <p>Sizes are read on the shard that owns each partition's log (logs are single-owner); the rest
 * is immutable and safe from any thread.
 */
public final class LogDirs {
    /** The volume's size was not available: the schema's default for TotalBytes and UsableBytes. */
    public static final long UNKNOWN_VOLUME_BYTES = -1L;
    /**
     * Kafka names a partition's folder in its destination directory {@code <topic>-<partition>.<32
     * hex digits>-future} while it moves, and refuses a move whose name would pass a file name's 255
     * characters (KAFKA-4893); Pier answers the same for the same topics.
     */
    private static final int FUTURE_DIR_SUFFIX_LENGTH = ".".length() + 32 + "-future".length();
    private static final int MAX_FILE_NAME_LENGTH = 255;

    private final Path dir;
    private final PartitionRegistry partitions;

    LogDirs(Path dataDir, PartitionRegistry partitions) {
        this.dir = dataDir.toAbsolutePath().normalize();
        this.partitions = partitions;
    }

    /** One partition's log in a directory, with the bytes of its segments. */
    public record PartitionLogSize(TopicPartition partition, long sizeBytes) {}

    /**
     * A log directory: its absolute path, the volume it is on ({@link #UNKNOWN_VOLUME_BYTES} when
     * the file system would not say), and the partitions asked about that it holds, by topic and
     * partition.
     */
    public record Description(String path, long totalBytes, long usableBytes, List<PartitionLogSize> partitions) {}

    /** The absolute path clients see for the one log directory. */
    public String path() {
        return dir.toString();
    }

    /** Describes every log directory with the partitions {@code wanted} accepts that it holds. */
    public CompletableFuture<List<Description>> describe(Predicate<TopicPartition> wanted) {
        List<CompletableFuture<List<PartitionLogSize>>> perShard = new ArrayList<>();
        for (Shard shard : partitions.shards()) {
            perShard.add(shard.call(() -> {
                List<PartitionLogSize> sizes = new ArrayList<>();
                partitions.forEachOwned(shard, p -> {
                    if (wanted.test(p.topicPartition())) {
                        sizes.add(new PartitionLogSize(p.topicPartition(), p.log().sizeInBytes()));
                    }
                });
                return sizes;
            }));
        }
        return Futures.all(perShard).thenApply(lists -> {
            List<PartitionLogSize> all = new ArrayList<>();
            lists.forEach(all::addAll);
            all.sort(Comparator.comparing((PartitionLogSize s) -> s.partition().topic())
                    .thenComparingInt(s -> s.partition().partition()));
            long[] volume = volumeBytes();
            return List.of(new Description(path(), volume[0], volume[1], all));
        });
    }

    /**
     * Kafka's answer to moving {@code partition} to the log directory {@code path}, on a broker
     * with this one directory: INVALID_TOPIC_EXCEPTION for a topic name too long to move (checked
     * first, as Kafka does), LOG_DIR_NOT_FOUND for a path that is not the log directory,
     * UNKNOWN_TOPIC_OR_PARTITION for a partition this broker does not have, and NONE when the
     * partition is already there: nothing to move.
     */
    public Errors alter(TopicPartition partition, String path) {
        String futureDirName = partition.topic() + "-" + partition.partition();
        if (futureDirName.length() + FUTURE_DIR_SUFFIX_LENGTH > MAX_FILE_NAME_LENGTH) {
            return Errors.INVALID_TOPIC_EXCEPTION;
        }
        if (!path().equals(path)) {
            // Kafka compares the path as given with each configured directory's absolute path.
            return Errors.LOG_DIR_NOT_FOUND;
        }
        Partition p = partitions.get(partition);
        return p == null || p.isDeleted() ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE;
    }

    /** Total and usable bytes of the directory's volume; a negative size (JDK-8162520) means too large to say. */
    private long[] volumeBytes() {
        try {
            FileStore store = Files.getFileStore(dir);
            return new long[] {orMax(store.getTotalSpace()), orMax(store.getUsableSpace())};
        } catch (IOException e) {
            return new long[] {UNKNOWN_VOLUME_BYTES, UNKNOWN_VOLUME_BYTES};
        }
    }

    private static long orMax(long bytes) {
        return bytes < 0 ? Long.MAX_VALUE : bytes;
    }
}
