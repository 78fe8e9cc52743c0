package io.pier.protocol;

import java.util.Map;
import java.util.function.IntConsumer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * A response carrying a generated message as is, for APIs whose kafka-clients response class
 * has no public constructor from its data. Only {@link #data()} is used to write it; the throttle
 * time is written into the message through {@code setThrottle}, as the message classes share no
 * interface for it.
 */
final class MessageResponse extends AbstractResponse {
    private final ApiMessage data;
    private final IntConsumer setThrottle;
    private int throttleTimeMs;

    MessageResponse(ApiKeys key, ApiMessage data, IntConsumer setThrottle) {
        super(key);
        this.data = data;
        this.setThrottle = setThrottle;
    }

    @Override
    public ApiMessage data() {
        return data;
    }

    @Override
    public Map<Errors, Integer> errorCounts() {
        return Map.of();
    }

    @Override
    public int throttleTimeMs() {
        return throttleTimeMs;
    }

    @Override
    public void maybeSetThrottleTimeMs(int throttleTimeMs) {
        this.throttleTimeMs = throttleTimeMs;
        setThrottle.accept(throttleTimeMs);
    }
}
