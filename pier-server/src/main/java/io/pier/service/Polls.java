package io.pier.service;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/** Starts long polls, each on the shard its key hashes to (a share fetch: its group's shard). */
public final class Polls {
    private final PartitionRegistry partitions;

    public Polls(PartitionRegistry partitions) {
        this.partitions = partitions;
    }

    /** Runs {@code attempt} until it answers or {@code maxWaitMs} passes; see {@link LongPoll}. */
    public <R> CompletableFuture<R> start(String homeKey, long maxWaitMs, LongPoll.Attempt<R> attempt) {
        return LongPoll.start(partitions.shardForKey(homeKey), maxWaitMs, attempt);
    }

    /** As {@link #start(String, long, LongPoll.Attempt)}, at home on the shard that owns {@code home}. */
    public <R> CompletableFuture<R> start(TopicPartition home, long maxWaitMs, LongPoll.Attempt<R> attempt) {
        return LongPoll.start(partitions.shardFor(home), maxWaitMs, attempt);
    }
}
