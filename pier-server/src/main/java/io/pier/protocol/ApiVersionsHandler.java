package io.pier.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

/** ApiVersions: advertises exactly the APIs registered in the router. */
public final class ApiVersionsHandler implements ApiHandler {
    private final ApiRouter router;

    public ApiVersionsHandler(ApiRouter router) {
        this.router = router;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ApiVersionsRequest body = request.bodyAs(ApiVersionsRequest.class);
        ApiVersionsResponseData data = new ApiVersionsResponseData();
        if (!body.isValid()) {
            data.setErrorCode(Errors.INVALID_REQUEST.code());
        }
        router.advertised().values().forEach(v -> data.apiKeys().add(v.duplicate()));
        return CompletableFuture.completedFuture(new ApiVersionsResponse(data));
    }
}
