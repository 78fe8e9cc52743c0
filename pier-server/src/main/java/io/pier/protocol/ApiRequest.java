package io.pier.protocol;

import io.pier.service.ClientConnection;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;

/** A decoded request with its header and the connection it arrived on. */
public record ApiRequest(RequestHeader header, AbstractRequest body, ClientConnection connection) {
    public short version() {
        return header.apiVersion();
    }

    @SuppressWarnings("unchecked")
    public <T extends AbstractRequest> T bodyAs(Class<T> type) {
        return (T) body;
    }
}
