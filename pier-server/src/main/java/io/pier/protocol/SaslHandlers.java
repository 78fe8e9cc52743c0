package io.pier.protocol;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * SaslHandshake and SaslAuthenticate as the router sees them: a SASL listener's gate answers them
 * while the client authenticates, so what reaches here is either on a listener without SASL or
 * after authentication while re-authentication is off ({@code connections.max.reauth.ms} 0). Kafka
 * answers both with ILLEGAL_SASL_STATE.
 */
public final class SaslHandlers {
    private SaslHandlers() {}

    public static CompletableFuture<AbstractResponse> handshake(ApiRequest request) {
        return CompletableFuture.completedFuture(new SaslHandshakeResponse(new SaslHandshakeResponseData()
                .setErrorCode(Errors.ILLEGAL_SASL_STATE.code()).setMechanisms(List.of())));
    }

    public static CompletableFuture<AbstractResponse> authenticate(ApiRequest request) {
        return CompletableFuture.completedFuture(new SaslAuthenticateResponse(new SaslAuthenticateResponseData()
                .setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
                .setErrorMessage("SaslAuthenticate is only valid while authenticating on a SASL listener")
                .setAuthBytes(new byte[0])));
    }
}
