package io.pier.network;

import io.pier.security.SaslAuthenticators;
import io.pier.security.SaslExchange;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.Utils;

/**
 * The SASL state of one connection on a SASL listener, as in Kafka's SaslServerAuthenticator:
 * until a SaslHandshake only ApiVersions and SaslHandshake are served, then only SaslAuthenticate
 * until the exchange completes; any other request closes the connection. While unauthenticated
 * the frame limit is {@code sasl.server.max.receive.size}; success sets the principal and lifts it.
 * A failed login is answered after {@code connection.failed.authentication.delay.ms}, then closed.
 *
 * <p>With {@code connections.max.reauth.ms} the session lasts that long (SaslAuthenticate v1+
 * tells the client); after it, any request but a SaslHandshake closes the connection. A
 * SaslHandshake after authentication re-authenticates: same mechanism, and it must prove the same
 * principal, else the connection closes.
 */
final class SaslGate {
    private enum State { HANDSHAKE, AUTHENTICATE, DONE }

    /** A response the gate produced itself, and whether the connection closes after sending it. */
    record Answer(CompletableFuture<AbstractResponse> response, boolean closeAfter) {}

    private final SaslAuthenticators authenticators;
    private final Connection connection;
    private final FrameDecoder decoder;
    private final int authenticatedMaxFrameBytes;
    private final ScheduledExecutorService scheduler;
    private State state = State.HANDSHAKE;
    private SaslExchange exchange;
    private String mechanism;
    private boolean reauthenticating;
    private long authenticatedAtNanos;

    SaslGate(SaslAuthenticators authenticators, Connection connection, FrameDecoder decoder,
            int authenticatedMaxFrameBytes, ScheduledExecutorService scheduler) {
        this.authenticators = authenticators;
        this.connection = connection;
        this.decoder = decoder;
        this.authenticatedMaxFrameBytes = authenticatedMaxFrameBytes;
        this.scheduler = scheduler;
        decoder.maxFrameBytes(Math.min(authenticators.maxReceiveBytes(), authenticatedMaxFrameBytes));
    }

    /** Whether a request of {@code key} may be read in the current state; if not, the connection closes. */
    boolean admits(ApiKeys key) {
        return switch (state) {
            case HANDSHAKE -> key == ApiKeys.API_VERSIONS || key == ApiKeys.SASL_HANDSHAKE;
            case AUTHENTICATE -> key == ApiKeys.SASL_AUTHENTICATE;
            case DONE -> key == ApiKeys.SASL_HANDSHAKE || !expired();
        };
    }

    private boolean expired() {
        long reauthMs = authenticators.reauthMs();
        return reauthMs > 0 && System.nanoTime() - authenticatedAtNanos > TimeUnit.MILLISECONDS.toNanos(reauthMs);
    }

    /** For the log of a refused request. */
    String state() {
        return state == State.DONE ? "session expired (connections.max.reauth.ms)" : "not yet authenticated";
    }

    /** The gate's answer to an admitted request, or null when the router serves it. */
    Answer handle(AbstractRequest body) {
        if (state == State.HANDSHAKE && body instanceof SaslHandshakeRequest handshake) {
            return handshake(handshake);
        }
        if (state == State.DONE && authenticators.reauthMs() > 0 && body instanceof SaslHandshakeRequest handshake) {
            return reauthenticate(handshake);
        }
        if (state == State.AUTHENTICATE && body instanceof SaslAuthenticateRequest authenticate) {
            return authenticate(authenticate);
        }
        return null;
    }

    private Answer handshake(SaslHandshakeRequest request) {
        String requested = request.data().mechanism();
        SaslHandshakeResponseData data = new SaslHandshakeResponseData()
                .setMechanisms(authenticators.enabledMechanisms());
        SaslExchange started = authenticators.start(requested);
        if (started == null) {
            data.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code());
            return new Answer(CompletableFuture.completedFuture(new SaslHandshakeResponse(data)), true);
        }
        exchange = started;
        mechanism = requested;
        state = State.AUTHENTICATE;
        return new Answer(CompletableFuture.completedFuture(new SaslHandshakeResponse(data.setErrorCode((short) 0))),
                false);
    }

    private Answer reauthenticate(SaslHandshakeRequest request) {
        SaslHandshakeResponseData data = new SaslHandshakeResponseData()
                .setMechanisms(authenticators.enabledMechanisms());
        if (!request.data().mechanism().equals(mechanism)) {
            // Kafka too: a session keeps its mechanism.
            data.setErrorCode(Errors.ILLEGAL_SASL_STATE.code());
            return new Answer(CompletableFuture.completedFuture(new SaslHandshakeResponse(data)), true);
        }
        exchange = authenticators.start(mechanism);
        reauthenticating = true;
        state = State.AUTHENTICATE;
        return new Answer(CompletableFuture.completedFuture(new SaslHandshakeResponse(data.setErrorCode((short) 0))),
                false);
    }

    private Answer authenticate(SaslAuthenticateRequest request) {
        byte[] challenge;
        try {
            challenge = exchange.evaluate(request.data().authBytes());
        } catch (SaslAuthenticationException e) {
            return failed(e.getMessage());
        }
        SaslAuthenticateResponseData data = new SaslAuthenticateResponseData().setErrorCode((short) 0)
                .setAuthBytes(challenge);
        if (exchange.isComplete()) {
            KafkaPrincipal who = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, exchange.authorizationId());
            if (reauthenticating && !who.equals(connection.principal())) {
                return failed(null); // a connection cannot change whose it is
            }
            connection.authenticated(who);
            decoder.maxFrameBytes(authenticatedMaxFrameBytes);
            state = State.DONE;
            reauthenticating = false;
            exchange = null;
            authenticatedAtNanos = System.nanoTime();
            if (request.version() >= 1) {
                data.setSessionLifetimeMs(authenticators.reauthMs());
            }
        }
        return new Answer(CompletableFuture.completedFuture(new SaslAuthenticateResponse(data)), false);
    }

    private Answer failed(String message) {
        exchange = null;
        SaslAuthenticateResponse response = new SaslAuthenticateResponse(new SaslAuthenticateResponseData()
                .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
                .setErrorMessage(message != null ? message : SaslExchange.failure(mechanism).getMessage())
                .setAuthBytes(Utils.toArray(ByteBuffer.allocate(0))));
        CompletableFuture<AbstractResponse> delayed = new CompletableFuture<>();
        long delay = authenticators.failureDelayMs();
        if (delay <= 0) {
            delayed.complete(response);
        } else {
            var unused = scheduler.schedule(() -> delayed.complete(response), delay, TimeUnit.MILLISECONDS);
        }
        return new Answer(delayed, true);
    }
}
