package io.pier.state;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The durable state of the transaction coordinators: one {@link TransactionRecord} per
 * transactional id. A write completes once it is durable, and only then do reads show it. Every
 * method is safe from any thread; futures complete on the store's own thread.
 */
public interface TransactionStore {
    /** Stores {@code record}, replacing what its transactional id had. */
    CompletableFuture<Void> write(TransactionRecord record);

    /** Forgets {@code transactionalId} (an expired id). */
    CompletableFuture<Void> remove(String transactionalId);

    /** The durable records, an immutable copy: what a coordinator recovers from. */
    Map<String, TransactionRecord> transactions();
}
