package io.pier.service;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;

/** Starts long polls, each on the shard its key hashes to (a share fetch: its group's shard). */
public final class Polls {
    private final PartitionRegistry partitions;
    private final LongPoll.Answers answers;

    public Polls(PartitionRegistry partitions, LongPoll.Answers answers) {
        this.partitions = partitions;
        this.answers = answers;
    }

    /** Runs {@code attempt} until it answers or {@code maxWaitMs} passes; see {@link LongPoll}. */
    public <R> CompletableFuture<R> start(ApiKeys api, String homeKey, long maxWaitMs, LongPoll.Attempt<R> attempt) {
        return LongPoll.start(partitions.shardForKey(homeKey), api, maxWaitMs, answers, attempt);
    }

    /** As {@link #start(ApiKeys, String, long, LongPoll.Attempt)}, at home on the shard that owns {@code home}. */
    public <R> CompletableFuture<R> start(ApiKeys api, TopicPartition home, long maxWaitMs,
            LongPoll.Attempt<R> attempt) {
        return LongPoll.start(partitions.shardFor(home), api, maxWaitMs, answers, attempt);
    }
}
