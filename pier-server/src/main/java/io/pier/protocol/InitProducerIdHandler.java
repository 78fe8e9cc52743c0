package io.pier.protocol;

import io.pier.service.ProducerIdAllocator;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;

/**
 * InitProducerId: a fresh producer id for an idempotent producer; a transactional one goes to its
 * transaction coordinator ({@link TransactionHandlers#initProducerId}), whose (bumped) epoch
 * fences any older producer of the same transactional id.
 */
public final class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdAllocator allocator;
    private final TransactionHandlers transactions;

    public InitProducerIdHandler(ProducerIdAllocator allocator, TransactionHandlers transactions) {
        this.allocator = allocator;
        this.transactions = transactions;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        InitProducerIdRequest body = request.bodyAs(InitProducerIdRequest.class);
        if (body.data().transactionalId() != null) {
            return transactions.initProducerId(request);
        }
        // A fresh id (epoch 0) also serves a producer bumping its epoch after an error:
        // the client accepts whatever id and epoch it is given.
        InitProducerIdResponseData data = new InitProducerIdResponseData();
        return allocator.nextProducerId().thenApply(id ->
                new InitProducerIdResponse(data.setProducerId(id).setProducerEpoch((short) 0)));
    }
}
