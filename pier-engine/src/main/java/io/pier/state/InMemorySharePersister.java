package io.pier.state;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link SharePersister} that keeps the merged state of every key in memory, for tests and for
 * a broker run without durable share state. Every future it returns is already complete.
 *
 * <p>Merging follows {@link StateBatchCombiner}. Writes with a state epoch lower than the stored
 * one are fenced, and writes to a key that was never initialised fail, as Kafka's share
 * coordinator does. {@link #failNextWrites(int)} makes the next writes fail without changing
 * anything, so tests can drive the engine's rollback path.
 */
public final class InMemorySharePersister implements SharePersister {
    private final ConcurrentMap<SharePartitionKey, ShareState> states = new ConcurrentHashMap<>();
    private final AtomicInteger writesToFail = new AtomicInteger();
    private final AtomicInteger writeCount = new AtomicInteger();

    /** Makes the next {@code n} calls to {@link #write} fail. */
    public void failNextWrites(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0: " + n);
        }
        writesToFail.set(n);
    }

    /** Writes accepted so far (failed ones excluded). */
    public int writeCount() {
        return writeCount.get();
    }

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        if (writesToFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return CompletableFuture.failedFuture(new PersisterException("injected write failure"));
        }
        ShareState current = states.get(write.key());
        if (current == null) {
            return CompletableFuture.failedFuture(
                    new PersisterException("share state not initialised: " + write.key()));
        }
        if (write.stateEpoch() < current.stateEpoch()) {
            return CompletableFuture.failedFuture(new PersisterException(
                    "fenced state epoch " + write.stateEpoch() + " < " + current.stateEpoch()));
        }
        // As the durable persister: the start offset never moves back (only initialize resets
        // it), and a write from a newer state epoch carries that epoch.
        long startOffset = Math.max(current.startOffset(), write.startOffset());
        List<PersistedBatch> merged =
                StateBatchCombiner.combine(current.batches(), write.batches(), startOffset);
        states.put(write.key(), new ShareState(Math.max(current.stateEpoch(), write.stateEpoch()), startOffset,
                merged));
        writeCount.incrementAndGet();
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        return states.get(key);
    }

    @Override
    public Set<SharePartitionKey> keys() {
        return Set.copyOf(states.keySet());
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        states.compute(key, (k, old) ->
                new ShareState(old == null ? 0 : old.stateEpoch() + 1, startOffset, List.of()));
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        states.remove(key);
        return CompletableFuture.completedFuture(null);
    }

    /** Why a write was refused. */
    public static final class PersisterException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public PersisterException(String message) {
            super(message);
        }
    }
}
