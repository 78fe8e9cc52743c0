package io.pier.it.txn;

import io.pier.testkit.PierExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TransactionScenarios} with {@code transaction.version=1}: the 4.4 clients send
 * AddPartitionsToTxn and EndTxn v4, as clients older than Kafka 4.0 always do.
 */
class TransactionsV1IT extends TransactionScenarios {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "2", "transaction.version", "1");

    @Override
    PierExtension pier() {
        return PIER;
    }

    @Override
    short transactionVersion() {
        return 1;
    }
}
