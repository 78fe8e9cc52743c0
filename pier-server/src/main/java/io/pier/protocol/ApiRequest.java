package io.pier.protocol;

import io.pier.service.ClientConnection;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/** A decoded request with its header and the connection it arrived on. */
public record ApiRequest(RequestHeader header, AbstractRequest body, ClientConnection connection) {
    public short version() {
        return header.apiVersion();
    }

    /** Who sent it: see {@link ClientConnection#principal()}. */
    public KafkaPrincipal principal() {
        return connection.principal();
    }

    @SuppressWarnings("unchecked")
    public <T extends AbstractRequest> T bodyAs(Class<T> type) {
        return (T) body;
    }
}
