package io.pier.state;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * The committed offsets of consumer groups. A change completes once it is durable, and only then
 * do reads show it, so an OffsetFetch never sees an offset that a crash could take back. Every
 * method is safe from any thread; futures complete on the store's own thread.
 *
 * <p>{@link DurableOffsetStore} keeps the offsets in a {@link ShareStateLog} (the record-log
 * seam: Pier's own partition log on a local folder today, an upstream Kafka topic later).
 */
public interface OffsetStore {
    /** Stores {@code offsets} of {@code groupId}, each replacing what the partition had. */
    CompletableFuture<Void> commit(String groupId, Map<TopicPartition, CommittedOffset> offsets);

    /** Removes the offsets of {@code partitions} of {@code groupId}; absent ones are ignored. */
    CompletableFuture<Void> delete(String groupId, Collection<TopicPartition> partitions);

    /** Removes every offset of {@code groupId}. */
    CompletableFuture<Void> deleteGroup(String groupId);

    /**
     * Removes each offset of {@code unchanged} that is still the one given (offsets.retention.minutes):
     * one committed meanwhile is newer than what its caller judged expired, and stays.
     */
    CompletableFuture<Void> expire(String groupId, Map<TopicPartition, CommittedOffset> unchanged);

    /**
     * Removes every offset of a topic that is not in {@code liveTopics} (name to id), or whose
     * stored topic id differs: offsets of a deleted topic go with it.
     */
    CompletableFuture<Void> retainTopics(Map<String, Uuid> liveTopics);

    /**
     * Stores offsets committed inside the transaction of {@code producerId} (TxnOffsetCommit):
     * durable, but not among {@link #offsets} until {@link #completePending} commits them.
     */
    CompletableFuture<Void> commitPending(String groupId, long producerId, Map<TopicPartition, CommittedOffset> offsets);

    /**
     * The transaction marker for the group: with {@code commit} every pending offset of
     * {@code producerId} becomes the group's committed offset, otherwise they are dropped; both in
     * one durable write. Idempotent (the coordinator writes markers again after a crash).
     */
    CompletableFuture<Void> completePending(String groupId, long producerId, boolean commit);

    /** The durable pending offsets of ({@code groupId}, {@code producerId}), an immutable map. */
    Map<TopicPartition, CommittedOffset> pendingOffsets(String groupId, long producerId);

    /**
     * The partitions of {@code groupId} with a pending transactional offset: where OffsetFetch with
     * require_stable answers UNSTABLE_OFFSET_COMMIT, as Kafka does.
     */
    Set<TopicPartition> pendingPartitions(String groupId);

    /** The durable offsets of {@code groupId}, an immutable map (empty for none). */
    Map<TopicPartition, CommittedOffset> offsets(String groupId);

    /** The groups that have at least one durable offset. */
    Set<String> groups();
}
