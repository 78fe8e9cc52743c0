package io.pier.share;

import io.pier.state.PersistedBatch;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects per-offset state changes, in ascending offset order, into run-length
 * {@link PersistedBatch}es: adjacent offsets with the same state and delivery count share a batch.
 */
final class StateWriteBuilder {
    private final List<PersistedBatch> batches = new ArrayList<>();
    private long first = -1;
    private long last = -1;
    private RecordState state;
    private short count;
    private long notBefore;

    void add(long offset, RecordState newState, short deliveryCount) {
        add(offset, newState, deliveryCount, PersistedBatch.NO_BACKOFF);
    }

    /** As {@link #add(long, RecordState, short)}, for an AVAILABLE record in backoff until {@code notBeforeMs}. */
    void add(long offset, RecordState newState, short deliveryCount, long notBeforeMs) {
        if (newState == RecordState.ACQUIRED) {
            throw new IllegalArgumentException("ACQUIRED is never persisted");
        }
        long nb = newState == RecordState.AVAILABLE ? notBeforeMs : PersistedBatch.NO_BACKOFF;
        if (first >= 0 && offset == last + 1 && newState == state && deliveryCount == count && nb == notBefore) {
            last = offset;
            return;
        }
        flush();
        first = offset;
        last = offset;
        state = newState;
        count = deliveryCount;
        notBefore = nb;
    }

    boolean isEmpty() {
        return first < 0 && batches.isEmpty();
    }

    List<PersistedBatch> build() {
        flush();
        return List.copyOf(batches);
    }

    private void flush() {
        if (first >= 0) {
            batches.add(new PersistedBatch(first, last, state.id, count, notBefore));
            first = -1;
        }
    }
}
