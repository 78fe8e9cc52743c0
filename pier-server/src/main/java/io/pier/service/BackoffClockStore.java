package io.pier.service;

import io.pier.common.Clock;
import io.pier.state.ForwardingShareStateStore;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import io.pier.state.ShareStateStore;
import io.pier.state.ShareStateWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The share-state store as the share engine sees it, with release backoffs in monotonic time:
 * the engine counts time on the monotonic clock, which starts anew with each process, so the
 * not-before time of a record in backoff is stored as wall-clock time and turned back on reading.
 * A restart thereby keeps the rest of each delay. Everything else passes through unchanged.
 */
final class BackoffClockStore extends ForwardingShareStateStore {
    private final Clock clock;

    BackoffClockStore(ShareStateStore store, Clock clock) {
        super(store);
        this.clock = clock;
    }

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        if (write.batches().stream().noneMatch(PersistedBatch::hasBackoff)) {
            return super.write(write);
        }
        long wallMinusMono = clock.wallMs() - clock.monoMs();
        return super.write(new ShareStateWrite(write.key(), write.stateEpoch(), write.startOffset(),
                shifted(write.batches(), wallMinusMono)));
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        ShareState state = super.read(key);
        if (state == null || state.batches().stream().noneMatch(PersistedBatch::hasBackoff)) {
            return state;
        }
        long monoMinusWall = clock.monoMs() - clock.wallMs();
        return new ShareState(state.stateEpoch(), state.startOffset(), shifted(state.batches(), monoMinusWall));
    }

    private static List<PersistedBatch> shifted(List<PersistedBatch> batches, long byMs) {
        List<PersistedBatch> out = new ArrayList<>(batches.size());
        for (PersistedBatch b : batches) {
            out.add(b.hasBackoff() ? b.withNotBefore(b.notBeforeMs() + byMs) : b);
        }
        return out;
    }
}
