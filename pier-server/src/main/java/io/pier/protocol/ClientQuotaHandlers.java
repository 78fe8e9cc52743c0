package io.pier.protocol;

import io.pier.service.TopicService;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

/**
 * DescribeClientQuotas and AlterClientQuotas (KIP-546), what {@code kafka-configs --entity-type
 * users|clients|ips} and {@code Admin.alterClientQuotas} send. The quotas are cluster metadata,
 * stored with the topics; a bad filter fails the whole describe, a bad entity only its own entry.
 */
public final class ClientQuotaHandlers {
    private final TopicService metadata;

    public ClientQuotaHandlers(TopicService metadata) {
        this.metadata = metadata;
    }

    public CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        DescribeClientQuotasRequest body = request.bodyAs(DescribeClientQuotasRequest.class);
        try {
            return CompletableFuture.completedFuture(
                    DescribeClientQuotasResponse.fromQuotaEntities(metadata.describeClientQuotas(body.filter()), 0));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(body.getErrorResponse(0, e));
        }
    }

    public CompletableFuture<AbstractResponse> alter(ApiRequest request) {
        AlterClientQuotasRequest body = request.bodyAs(AlterClientQuotasRequest.class);
        return metadata.alterClientQuotas(body.entries(), body.validateOnly()).thenApply(results -> {
            Map<ClientQuotaEntity, ApiError> errors = new LinkedHashMap<>();
            results.forEach((entity, error) -> errors.put(entity,
                    error.map(ApiError::fromThrowable).orElse(ApiError.NONE)));
            return AlterClientQuotasResponse.fromQuotaEntities(errors, 0);
        });
    }
}
