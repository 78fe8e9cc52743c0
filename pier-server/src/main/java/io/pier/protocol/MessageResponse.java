package io.pier.protocol;

import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * A response carrying a generated message as is, for APIs whose kafka-clients response class
 * has no public constructor from its data. Only {@link #data()} is used to write it.
 */
final class MessageResponse extends AbstractResponse {
    private final ApiMessage data;

    MessageResponse(ApiKeys key, ApiMessage data) {
        super(key);
        this.data = data;
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
        return 0;
    }

    @Override
    public void maybeSetThrottleTimeMs(int throttleTimeMs) {
        // Pier does not throttle yet.
    }
}
