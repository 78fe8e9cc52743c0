package io.pier.it.txn;

import io.pier.testkit.PierExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link TransactionScenarios} at transaction version 2, the default: the 4.4 clients use KIP-890 part 2. */
class TransactionsIT extends TransactionScenarios {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "2");

    @Override
    PierExtension pier() {
        return PIER;
    }

    @Override
    short transactionVersion() {
        return 2;
    }
}
