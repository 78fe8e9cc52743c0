package io.pier.protocol;

import io.pier.service.ProducerIdAllocator;
import io.pier.service.Transactions;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;

/**
 * InitProducerId: a fresh producer id for an idempotent producer; for a transactional one, the
 * id and (bumped) epoch its transaction coordinator gives, which fences any older producer of the
 * same transactional id.
 */
public final class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdAllocator allocator;
    private final Transactions transactions;

    public InitProducerIdHandler(ProducerIdAllocator allocator, Transactions transactions) {
        this.allocator = allocator;
        this.transactions = transactions;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        InitProducerIdRequestData body = request.bodyAs(InitProducerIdRequest.class).data();
        InitProducerIdResponseData data = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
        if (body.transactionalId() != null) {
            if (body.enable2Pc()) {
                // KIP-939's two-phase commit needs transaction.two.phase.commit.enable on the broker.
                return CompletableFuture.completedFuture(new InitProducerIdResponse(
                        data.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())));
            }
            return transactions.initProducerId(body.transactionalId(), body.transactionTimeoutMs(),
                    body.producerId(), body.producerEpoch()).thenApply(r -> new InitProducerIdResponse(data
                            .setErrorCode(r.error().code())
                            .setProducerId(r.producerId())
                            .setProducerEpoch(r.producerEpoch())));
        }
        // A fresh id (epoch 0) also serves a producer bumping its epoch after an error:
        // the client accepts whatever id and epoch it is given.
        return allocator.nextProducerId().thenApply(id ->
                new InitProducerIdResponse(data.setProducerId(id).setProducerEpoch((short) 0)));
    }
}
