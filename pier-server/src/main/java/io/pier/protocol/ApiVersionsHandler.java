package io.pier.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

/** ApiVersions: advertises exactly the APIs registered in the router, and the broker's features. */
public final class ApiVersionsHandler implements ApiHandler {
    private final ApiRouter router;
    private final BrokerFeatures features;

    public ApiVersionsHandler(ApiRouter router, BrokerFeatures features) {
        this.router = router;
        this.features = features;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ApiVersionsRequest body = request.bodyAs(ApiVersionsRequest.class);
        Errors error = body.isValid() ? Errors.NONE : Errors.INVALID_REQUEST;
        ApiVersionsResponse response = router.apiVersionsResponse(error);
        features.addTo(response.data());
        return CompletableFuture.completedFuture(response);
    }
}
