package io.pier.share;

/**
 * The keys of the records a share-partition reads, as 64-bit hashes, for ordering by key
 * ({@code pier.share.ordering=key}): {@link #NO_KEY} for a record without a key, or one the
 * reader did not look at. The owner of the log computes them; the engine sees only the hashes.
 */
@FunctionalInterface
public interface RecordKeys {
    /** The hash of a record without a key. A real key that hashes to it is counted as another key. */
    long NO_KEY = KeyOrder.NO_KEY;

    /** Keys of no record: what an unordered share-partition is given. */
    RecordKeys NONE = offset -> NO_KEY;

    long keyOf(long offset);

    /**
     * The offset (exclusive) up to which the keys are known: an ordered share-partition takes
     * nothing past its window at or beyond it, whatever the log read holds.
     */
    default long knownEnd() {
        return Long.MAX_VALUE;
    }
}
