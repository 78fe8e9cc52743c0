package io.pier.txn;

import io.pier.state.TransactionRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What DescribeTransactions and ListTransactions read of a coordinator's ids. An id still being
 * created (no producer id yet) or DEAD is not shown, as Kafka shows neither.
 */
final class TransactionQueries {
    private TransactionQueries() {}

    static Optional<TransactionDescription> describe(TransactionMetadata m) {
        if (!isVisible(m)) {
            return Optional.empty();
        }
        TransactionRecord r = m.current();
        return Optional.of(new TransactionDescription(r.transactionalId(), m.state(), r.producerId(),
                r.producerEpoch(), r.timeoutMs(), r.startTimestampMs(), r.partitions(), r.groupIds()));
    }

    static List<TransactionListing> list(Collection<TransactionMetadata> txns, TransactionFilter filter, long nowMs) {
        List<TransactionListing> out = new ArrayList<>();
        for (TransactionMetadata m : txns) {
            if (!isVisible(m)) {
                continue;
            }
            TransactionRecord r = m.current();
            boolean state = filter.states().isEmpty() || filter.states().contains(m.state());
            boolean pid = filter.producerIds().isEmpty() || filter.producerIds().contains(r.producerId());
            // Kafka's DurationFilter: only transactions running longer than the duration.
            boolean duration = filter.minDurationMs() < 0
                    || (r.startTimestampMs() >= 0 && nowMs - r.startTimestampMs() > filter.minDurationMs());
            if (state && pid && duration) {
                out.add(new TransactionListing(r.transactionalId(), r.producerId(), m.state()));
            }
        }
        return out;
    }

    private static boolean isVisible(TransactionMetadata m) {
        return m != null && m.current().producerId() != -1 && m.state() != TransactionState.DEAD;
    }
}
