package io.pier.protocol;

import io.pier.service.ProducerIdAllocator;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.Errors;
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

    private final Access access;

    public InitProducerIdHandler(ProducerIdAllocator allocator, TransactionHandlers transactions, Access access) {
        this.access = access;
        this.allocator = allocator;
        this.transactions = transactions;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        InitProducerIdRequest body = request.bodyAs(InitProducerIdRequest.class);
        if (body.data().transactionalId() != null) {
            return access.transactionalId(request, AclOperation.WRITE, body.data().transactionalId())
                    ? transactions.initProducerId(request)
                    : Access.refuse(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        }
        if (!access.mayProduceIdempotently(request)) {
            return Access.refuse(request, Errors.CLUSTER_AUTHORIZATION_FAILED);
        }
        // A fresh id (epoch 0) also serves a producer bumping its epoch after an error:
        // the client accepts whatever id and epoch it is given.
        InitProducerIdResponseData data = new InitProducerIdResponseData();
        return allocator.nextProducerId().thenApply(id ->
                new InitProducerIdResponse(data.setProducerId(id).setProducerEpoch((short) 0)));
    }
}
