package io.pier.txn;

import java.util.Set;

/**
 * ListTransactions' filters; an empty set matches everything.
 *
 * @param minDurationMs v1's {@code DurationFilter}: below 0 every transaction, otherwise only those
 *     running longer than this
 */
public record TransactionFilter(Set<TransactionState> states, Set<Long> producerIds, long minDurationMs) {
    public static final TransactionFilter ALL = new TransactionFilter(Set.of(), Set.of(), -1);

    public TransactionFilter {
        states = Set.copyOf(states);
        producerIds = Set.copyOf(producerIds);
    }
}
