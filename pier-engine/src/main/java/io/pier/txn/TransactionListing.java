package io.pier.txn;

/** One row of ListTransactions. */
public record TransactionListing(String transactionalId, long producerId, TransactionState state) {}
