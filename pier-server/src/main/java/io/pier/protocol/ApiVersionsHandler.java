package io.pier.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;

/** ApiVersions: advertises exactly the APIs registered in the router. */
public final class ApiVersionsHandler implements ApiHandler {
    private final ApiRouter router;

    public ApiVersionsHandler(ApiRouter router) {
        this.router = router;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ApiVersionsRequest body = request.bodyAs(ApiVersionsRequest.class);
        Errors error = body.isValid() ? Errors.NONE : Errors.INVALID_REQUEST;
        return CompletableFuture.completedFuture(router.apiVersionsResponse(error));
    }
}
