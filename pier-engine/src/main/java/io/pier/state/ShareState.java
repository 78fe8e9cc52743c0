package io.pier.state;

import java.util.List;

/**
 * What a load returns: the state epoch, the start offset (SPSO) and the merged, sorted,
 * non-overlapping state batches at or above it. A start offset of {@code -1} means initialised
 * without an offset yet (the leader then applies {@code share.auto.offset.reset}).
 */
public record ShareState(int stateEpoch, long startOffset, List<PersistedBatch> batches) {
    public ShareState {
        batches = List.copyOf(batches);
    }

    /**
     * This state with a write or an update record applied: the higher state epoch, the start
     * offset moved forward (never back; {@code -1} keeps it), the batches combined by
     * {@link StateBatchCombiner}.
     */
    ShareState merged(int epoch, long newStartOffset, List<PersistedBatch> changed) {
        long start = newStartOffset < 0 ? startOffset : Math.max(startOffset, newStartOffset);
        return new ShareState(Math.max(stateEpoch, epoch), start, StateBatchCombiner.combine(batches, changed, start));
    }
}
