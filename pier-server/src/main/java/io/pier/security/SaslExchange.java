package io.pier.security;

import org.apache.kafka.common.errors.SaslAuthenticationException;

/** The server side of one SASL authentication on one connection, fed the client's tokens in order. */
public interface SaslExchange {
    /** The message every failed authentication gets: it never says which part was wrong. */
    static SaslAuthenticationException failure(String mechanism) {
        return new SaslAuthenticationException("Authentication failed during authentication due to invalid "
                + "credentials with SASL mechanism " + mechanism);
    }

    /** The challenge to send back (possibly empty); throws {@link SaslAuthenticationException} on failure. */
    byte[] evaluate(byte[] response);

    boolean isComplete();

    /** The authenticated user name, once {@link #isComplete()}. */
    String authorizationId();
}
