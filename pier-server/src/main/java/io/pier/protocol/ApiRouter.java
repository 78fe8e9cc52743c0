package io.pier.protocol;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * The APIs this broker implements, each with the version range it serves, and the handler that
 * serves it. Only what is registered here is advertised in ApiVersions, with one exception that
 * Kafka 4 makes too: Produce is advertised from v0 though only v3+ is served (KAFKA-18659).
 * librdkafka before 2.10 checks for Produce v0-v2 when it decides whether the broker supports
 * gzip, snappy, lz4 and zstd, and silently sends uncompressed batches if they are missing. A
 * Produce v0-v2 request, which kafka-clients cannot parse, still closes the connection, as on
 * Kafka.
 */
public final class ApiRouter {
    private static final short PRODUCE_ADVERTISED_MIN_VERSION = 0;
    /** What ApiVersions lists. */
    private final Map<ApiKeys, ApiVersion> versions = new EnumMap<>(ApiKeys.class);
    /** What is served: equal to {@link #versions} except for Produce's minimum. */
    private final Map<ApiKeys, ApiVersion> served = new EnumMap<>(ApiKeys.class);
    private final Map<ApiKeys, ApiHandler> handlers = new EnumMap<>(ApiKeys.class);
    private RequestObserver observer = RequestObserver.NONE;
    private RequestTimeQuota requestTime = RequestTimeQuota.NONE;

    /** Told when each routed request's response is ready (or failed), for latency metrics. */
    public interface RequestObserver {
        RequestObserver NONE = (api, elapsedNanos) -> { };

        /** Called on whatever thread completed the response; must be cheap. */
        void onResponse(ApiKeys api, long elapsedNanos);
    }

    /**
     * {@code request_percentage}: the network layer reports the time it spent on each request of
     * a client and learns how long that client is to be throttled for it.
     */
    public interface RequestTimeQuota {
        RequestTimeQuota NONE = (principal, clientId, nanos) -> 0;

        /** Counts {@code nanos} of request time; returns the throttle time in ms, 0 within the quota. */
        int record(KafkaPrincipal principal, String clientId, long nanos);
    }

    /** Sets the request-time quota; call while wiring, before the network serves. */
    public ApiRouter requestTimeQuota(RequestTimeQuota quota) {
        this.requestTime = quota;
        return this;
    }

    public RequestTimeQuota requestTimeQuota() {
        return requestTime;
    }

    /** Sets the observer; call while wiring, before the network serves. */
    public ApiRouter observer(RequestObserver observer) {
        this.observer = observer;
        return this;
    }

    public ApiRouter register(ApiKeys key, int minVersion, int maxVersion, ApiHandler handler) {
        if (minVersion < key.oldestVersion() || maxVersion > key.latestVersion(true)) {
            throw new IllegalArgumentException(key + " v" + minVersion + "-" + maxVersion
                    + " outside what kafka-clients can parse");
        }
        ApiVersion range = new ApiVersion().setApiKey(key.id).setMinVersion((short) minVersion)
                .setMaxVersion((short) maxVersion);
        served.put(key, range);
        versions.put(key, key == ApiKeys.PRODUCE ? range.duplicate().setMinVersion(PRODUCE_ADVERTISED_MIN_VERSION) : range);
        handlers.put(key, handler);
        return this;
    }

    /** The handler registered for {@code key}, or null. */
    public ApiHandler handler(ApiKeys key) {
        return handlers.get(key);
    }

    /** Removes every API but {@code kept}: a gateway keeps the few it answers itself. */
    public ApiRouter retainOnly(java.util.Set<ApiKeys> kept) {
        versions.keySet().retainAll(kept);
        served.keySet().retainAll(kept);
        handlers.keySet().retainAll(kept);
        return this;
    }

    public boolean supports(ApiKeys key, short version) {
        ApiVersion v = served.get(key);
        return v != null && version >= v.minVersion() && version <= v.maxVersion();
    }

    /** An ApiVersions response listing every registered API, with {@code error} as its error code. */
    public ApiVersionsResponse apiVersionsResponse(Errors error) {
        ApiVersionsResponseData data = new ApiVersionsResponseData().setErrorCode(error.code());
        versions.values().forEach(v -> data.apiKeys().add(v.duplicate()));
        return new ApiVersionsResponse(data);
    }

    public CompletableFuture<AbstractResponse> route(ApiRequest request) {
        ApiKeys api = request.header().apiKey();
        RequestObserver o = observer;
        if (o == RequestObserver.NONE) {
            return handlers.get(api).handle(request);
        }
        long startNanos = System.nanoTime();
        CompletableFuture<AbstractResponse> response;
        try {
            response = handlers.get(api).handle(request);
        } catch (RuntimeException e) {
            o.onResponse(api, System.nanoTime() - startNanos);
            throw e;
        }
        // The returned stage carries a failure of the observer itself too, so it is logged, not lost.
        return response.whenComplete((r, t) -> o.onResponse(api, System.nanoTime() - startNanos));
    }
}
