package io.pier.txn;

import java.util.concurrent.CompletableFuture;

/** Hands out producer ids never given out before (the broker's {@code ProducerIdAllocator}). */
@FunctionalInterface
public interface ProducerIdSource {
    CompletableFuture<Long> nextProducerId();
}
