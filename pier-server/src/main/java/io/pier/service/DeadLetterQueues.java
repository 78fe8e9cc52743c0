package io.pier.service;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * Where the dead letters of share groups go ({@link DeadLetters} decides which and when): the queue
 * topics, as far as letters need them. On a broker they are its own topics ({@link #local}); on a
 * gateway node they are the upstream's, written and read with the Kafka clients.
 */
public interface DeadLetterQueues {
    /** What {@link #find} knows of a queue topic now. */
    enum State {
        /** No such topic. */
        MISSING,
        /** The topic exists but lacks {@code errors.deadletterqueue.group.enable=true}. */
        NOT_ENABLED,
        /** Not known yet (just created, or being looked up): ask again shortly. */
        NOT_READY,
        /** Letters may be appended to its partitions. */
        READY
    }

    /** A queue topic's state and, when {@link State#READY}, its partition count. */
    record Queue(State state, int partitions) {
        public static final Queue MISSING = new Queue(State.MISSING, 0);
        public static final Queue NOT_ENABLED = new Queue(State.NOT_ENABLED, 0);
        public static final Queue NOT_READY = new Queue(State.NOT_READY, 0);

        public static Queue ready(int partitions) {
            return new Queue(State.READY, partitions);
        }
    }

    /** How an append ended: {@link Errors#NONE}, or the error with what the queue said of it. */
    record Appended(Errors error, String message) {
        public static final Appended OK = new Appended(Errors.NONE, null);
    }

    /** The named queue topic as this node knows it now, without waiting. Any thread. */
    Queue find(String name);

    /** Creates a queue topic (it may exist already: the future then fails with TopicExistsException). */
    CompletableFuture<Void> create(String name, int partitions, Map<String, String> configs);

    /**
     * Appends {@code letters} to {@code queue}, in order, as one record batch where the queue allows;
     * completes once they are durable, or with the error that kept them out. A retriable error may
     * leave some of them written: see {@link #mayLandAfterFailure()}.
     */
    CompletableFuture<Appended> append(TopicPartition queue, List<SimpleRecord> letters);

    /**
     * Which of {@code candidates} ({@link DeadLetterRecords#idOf}) the queue partition holds among
     * the trailing letters of {@code source}'s share-partition of {@code groupId} (see {@link
     * DeadLetterLookup}).
     */
    CompletableFuture<Set<String>> inQueue(TopicPartition queue, String groupId, TopicPartition source,
            Set<String> candidates);

    /**
     * Whether letters of an append that failed may be in the queue all the same (a request to a
     * remote queue whose answer was lost): they are then looked up before being written again.
     */
    default boolean mayLandAfterFailure() {
        return false;
    }

    /** The broker's own topics and logs. */
    static DeadLetterQueues local(TopicService topics, Logs logs) {
        return new LocalDeadLetterQueues(topics, logs);
    }
}
