package io.pier.state;

import java.util.List;
import java.util.Objects;

/**
 * One change to a share-partition's durable state, as Kafka's WriteShareGroupState carries it: the
 * ranges whose state or delivery count changed, plus the start offset. A {@code startOffset} of
 * {@code -1} leaves the stored start offset unchanged.
 */
public record ShareStateWrite(
        SharePartitionKey key, int stateEpoch, long startOffset, List<PersistedBatch> batches) {
    public ShareStateWrite {
        Objects.requireNonNull(key, "key");
        batches = List.copyOf(batches);
    }
}
