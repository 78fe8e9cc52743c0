package io.pier.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.requests.AbstractResponse;

/** Serves one Kafka API. A future completed with null means "send no response" (acks=0). */
@FunctionalInterface
public interface ApiHandler {
    CompletableFuture<AbstractResponse> handle(ApiRequest request);
}
