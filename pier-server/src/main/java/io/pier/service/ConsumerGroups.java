package io.pier.service;

import io.pier.common.Clock;
import io.pier.state.CommittedOffset;
import io.pier.state.OffsetStore;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * Consumer groups and their committed offsets. A group's checks run on the shard its id hashes to
 * (where its share-group namesake would live, so one group id is one kind of group); the offsets
 * themselves are written to the {@link OffsetStore} and answered once durable.
 */
public final class ConsumerGroups {
    /** Kafka's {@code offset.metadata.max.bytes} default. */
    static final int DEFAULT_OFFSET_METADATA_MAX_BYTES = 4096;
    /** OffsetCommit v9 answers GROUP_ID_NOT_FOUND where older versions answer ILLEGAL_GENERATION. */
    private static final short FIRST_VERSION_WITH_GROUP_ID_NOT_FOUND = 9;

    private final PartitionRegistry partitions;
    private final TopicService topics;
    private final ShareGroups shareGroups;
    private final OffsetStore offsets;
    private final Clock clock;
    private final int offsetMetadataMaxBytes;

    /** One OffsetCommit, decoded. */
    public record CommitRequest(String groupId, int generationId, String memberId, String groupInstanceId,
            short apiVersion, Map<TopicPartition, Offset> offsets) {}

    /** One partition's offset to commit. */
    public record Offset(long offset, int leaderEpoch, String metadata) {}

    /** Committed offsets of a group, or the group-level error that stopped the fetch. */
    public record Fetched(Errors error, Map<TopicPartition, CommittedOffset> offsets) {}

    /** The outcome of an OffsetDelete: a group-level error, else one error per partition. */
    public record Deleted(Errors error, Map<TopicPartition, Errors> partitions) {}

    ConsumerGroups(PartitionRegistry partitions, TopicService topics, ShareGroups shareGroups, OffsetStore offsets,
            Clock clock, Map<String, String> config) {
        this.partitions = partitions;
        this.topics = topics;
        this.shareGroups = shareGroups;
        this.offsets = offsets;
        this.clock = clock;
        this.offsetMetadataMaxBytes = Integer.parseInt(config.getOrDefault("offset.metadata.max.bytes",
                String.valueOf(DEFAULT_OFFSET_METADATA_MAX_BYTES)));
        topics.addTopicListener(this::retainLiveTopics);
        retainLiveTopics();
    }

    /** Offsets of deleted topics go with them (also those a crash left behind between the two). */
    private void retainLiveTopics() {
        Map<String, Uuid> live = new HashMap<>();
        for (TopicMetadata t : topics.topics()) {
            live.put(t.name(), t.id());
        }
        var unused = offsets.retainTopics(live); // a failure is fatal to the store, which reports it
    }

    private Shard shard(String groupId) {
        return partitions.shardForKey(groupId);
    }

    /**
     * Commits offsets: per partition NONE once durable, or why not (an unknown topic or partition,
     * metadata too long, or the group's refusal applied to every partition).
     */
    public CompletableFuture<Map<TopicPartition, Errors>> commit(CommitRequest request) {
        Map<TopicPartition, Errors> result = new LinkedHashMap<>();
        Map<TopicPartition, CommittedOffset> accepted = new LinkedHashMap<>();
        long nowMs = clock.wallMs();
        request.offsets().forEach((tp, o) -> {
            TopicMetadata topic = topics.topic(tp.topic());
            if (topic == null || tp.partition() < 0 || tp.partition() >= topic.partitionCount()) {
                result.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            } else if (o.metadata() != null && o.metadata().length() > offsetMetadataMaxBytes) {
                result.put(tp, Errors.OFFSET_METADATA_TOO_LARGE);
            } else {
                result.put(tp, Errors.NONE);
                accepted.put(tp, new CommittedOffset(topic.id(), o.offset(), o.leaderEpoch(), o.metadata(), nowMs));
            }
        });
        if (request.groupId() == null || request.groupId().isEmpty()) {
            result.replaceAll((tp, e) -> Errors.INVALID_GROUP_ID);
            return CompletableFuture.completedFuture(result);
        }
        Shard s = shard(request.groupId());
        return s.call(() -> validateCommit(request)).thenCompose(error -> {
            if (error != Errors.NONE || accepted.isEmpty()) {
                accepted.keySet().forEach(tp -> result.put(tp, error));
                return CompletableFuture.completedFuture(result);
            }
            return offsets.commit(request.groupId(), accepted).thenApply(v -> result);
        });
    }

    /** Shard thread only: whether the group takes this commit. */
    private Errors validateCommit(CommitRequest request) {
        if (shareGroups.existsOnShard(request.groupId())) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        boolean simple = request.generationId() < 0 && request.memberId().isEmpty()
                && request.groupInstanceId() == null;
        if (simple) {
            return Errors.NONE;
        }
        return request.apiVersion() >= FIRST_VERSION_WITH_GROUP_ID_NOT_FOUND ? Errors.GROUP_ID_NOT_FOUND
                : Errors.ILLEGAL_GENERATION;
    }

    /**
     * The committed offsets of {@code requested} partitions (null: every partition with one) of
     * {@code groupId}; a partition without one is left out.
     */
    public CompletableFuture<Fetched> fetch(String groupId, List<TopicPartition> requested) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(new Fetched(Errors.INVALID_GROUP_ID, Map.of()));
        }
        return shard(groupId).call(() -> {
            if (shareGroups.existsOnShard(groupId)) {
                return new Fetched(Errors.GROUP_ID_NOT_FOUND, Map.of());
            }
            Map<TopicPartition, CommittedOffset> all = offsets.offsets(groupId);
            if (requested == null) {
                return new Fetched(Errors.NONE, all);
            }
            Map<TopicPartition, CommittedOffset> some = new HashMap<>();
            for (TopicPartition tp : requested) {
                CommittedOffset o = all.get(tp);
                if (o != null) {
                    some.put(tp, o);
                }
            }
            return new Fetched(Errors.NONE, some);
        });
    }

    /** OffsetDelete: GROUP_ID_NOT_FOUND for a group without offsets (or a share group). */
    public CompletableFuture<Deleted> deleteOffsets(String groupId, List<TopicPartition> requested) {
        if (groupId == null || groupId.isEmpty()) {
            return CompletableFuture.completedFuture(new Deleted(Errors.INVALID_GROUP_ID, Map.of()));
        }
        return shard(groupId).call(() -> {
            if (shareGroups.existsOnShard(groupId) || offsets.offsets(groupId).isEmpty()) {
                return new Deleted(Errors.GROUP_ID_NOT_FOUND, Map.of());
            }
            Map<TopicPartition, Errors> result = new LinkedHashMap<>();
            requested.forEach(tp -> result.put(tp, Errors.NONE));
            return new Deleted(Errors.NONE, result);
        }).thenCompose(d -> {
            if (d.error() != Errors.NONE) {
                return CompletableFuture.completedFuture(d);
            }
            List<TopicPartition> gone = new ArrayList<>();
            d.partitions().forEach((tp, e) -> {
                if (e == Errors.NONE) {
                    gone.add(tp);
                }
            });
            return offsets.delete(groupId, gone).thenApply(v -> d);
        });
    }
}
