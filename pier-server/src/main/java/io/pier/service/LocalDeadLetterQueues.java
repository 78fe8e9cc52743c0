package io.pier.service;

import io.pier.state.TopicMetadata;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;

/** A broker's own queue topics: its metadata says what they are, its logs take the letters. */
final class LocalDeadLetterQueues implements DeadLetterQueues {
    private final TopicService topics;
    private final Logs logs;

    LocalDeadLetterQueues(TopicService topics, Logs logs) {
        this.topics = topics;
        this.logs = logs;
    }

    @Override
    public Queue find(String name) {
        TopicMetadata topic = topics.topic(name);
        if (topic == null) {
            return Queue.MISSING;
        }
        if (!topics.logConfig(topic).deadLetterGroupEnable()) {
            return Queue.NOT_ENABLED;
        }
        for (int p = 0; p < topic.partitionCount(); p++) {
            if (logs.partition(new TopicPartition(name, p)) == null) {
                // Just created: its metadata is visible before its partitions are open, and an
                // append now would fail and archive the records without their letters.
                return Queue.NOT_READY;
            }
        }
        return Queue.ready(topic.partitionCount());
    }

    @Override
    public CompletableFuture<Void> create(String name, int partitions, Map<String, String> configs) {
        return topics.create(name, partitions, configs, false).thenApply(t -> null);
    }

    @Override
    public CompletableFuture<Appended> append(TopicPartition queue, List<SimpleRecord> letters) {
        return logs.append(queue, DeadLetterRecords.batch(letters))
                .thenApply(r -> r.error() == Errors.NONE ? Appended.OK
                        : new Appended(r.error(), r.message()));
    }

    @Override
    public CompletableFuture<Set<String>> inQueue(TopicPartition queue, String groupId, TopicPartition source,
            Set<String> candidates) {
        Partition p = logs.partition(queue);
        if (p == null) {
            return CompletableFuture.completedFuture(Set.of());
        }
        return p.shard().call(() -> DeadLetterLookup.inQueue(p.log(), groupId, source, candidates));
    }
}
