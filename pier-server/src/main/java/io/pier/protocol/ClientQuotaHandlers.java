package io.pier.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.DescribeClientQuotasResponseData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;

/**
 * DescribeClientQuotas: Pier has no client quotas, so every filter matches nothing. kafka-configs
 * {@code --describe --entity-type users} asks for quotas before SCRAM credentials and fails when
 * the API is missing.
 */
public final class ClientQuotaHandlers {
    private ClientQuotaHandlers() {}

    public static CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        return CompletableFuture.completedFuture(new DescribeClientQuotasResponse(
                new DescribeClientQuotasResponseData().setErrorCode((short) 0)));
    }
}
