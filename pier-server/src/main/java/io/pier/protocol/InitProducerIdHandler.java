package io.pier.protocol;

import io.pier.service.ProducerIdAllocator;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;

/**
 * InitProducerId for idempotent producers. Transactional producers are refused: transactions
 * are not implemented, and a fatal error is clearer than a client retrying until it times out.
 */
public final class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdAllocator allocator;

    public InitProducerIdHandler(ProducerIdAllocator allocator) {
        this.allocator = allocator;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        InitProducerIdRequest body = request.bodyAs(InitProducerIdRequest.class);
        InitProducerIdResponseData data = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
        if (body.data().transactionalId() != null) {
            data.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code());
        } else {
            // A fresh id (epoch 0) also serves a producer bumping its epoch after an error:
            // the client accepts whatever id and epoch it is given.
            return allocator.nextProducerId().thenApply(id ->
                    new InitProducerIdResponse(data.setProducerId(id).setProducerEpoch((short) 0)));
        }
        return CompletableFuture.completedFuture(new InitProducerIdResponse(data));
    }
}
