package io.pier.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.sasl.SaslException;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;

/**
 * SCRAM-SHA-256/512 (RFC 5802) with kafka-clients' {@link ScramSaslServer}, which checks the
 * client-final nonce (CVE-2024-56128) and the proof in constant time, reading credentials from
 * the {@link ScramCredentialStore}. An unknown user is given a made-up credential, so the exchange
 * fails at the proof like a wrong password instead of telling at the first message that the name
 * is unknown. Every failure becomes the same {@link SaslExchange#failure}.
 */
final class ScramExchange implements SaslExchange {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Makes an unknown user's decoy salt the same on every attempt, as a real user's is. */
    private static final byte[] DECOY_SECRET = ScramFormatter.secureRandomBytes(RANDOM);
    private final ScramMechanism mechanism;
    private final ScramSaslServer server;

    ScramExchange(ScramMechanism mechanism, ScramCredentialStore store) {
        this.mechanism = mechanism;
        try {
            this.server = new ScramSaslServer(mechanism, Map.of(), callbacks -> {
                String user = null;
                for (Callback c : callbacks) {
                    if (c instanceof NameCallback name) {
                        user = name.getDefaultName();
                    } else if (c instanceof ScramCredentialCallback credential) {
                        ScramCredential found = user == null ? null : store.get(user, mechanism);
                        credential.scramCredential(found != null ? found : decoy(mechanism, user));
                    }
                    // A delegation-token callback stays unanswered: Pier has no tokens, so tokenauth fails.
                }
            });
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(mechanism + " is not available in this JVM", e);
        }
    }

    private static ScramCredential decoy(ScramMechanism mechanism, String user) {
        int len = mechanism == ScramMechanism.SCRAM_SHA_256 ? 32 : 64;
        byte[] salt;
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(DECOY_SECRET);
            digest.update(mechanism.mechanismName().getBytes(StandardCharsets.UTF_8));
            salt = digest.digest(String.valueOf(user).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] stored = new byte[len];
        byte[] serverKey = new byte[len];
        RANDOM.nextBytes(stored);
        RANDOM.nextBytes(serverKey);
        return new ScramCredential(salt, stored, serverKey, ScramCredentialStore.DEFAULT_ITERATIONS);
    }

    @Override
    public byte[] evaluate(byte[] response) {
        try {
            return server.evaluateResponse(response);
        } catch (SaslException | RuntimeException e) {
            throw SaslExchange.failure(mechanism.mechanismName());
        }
    }

    @Override
    public boolean isComplete() {
        return server.isComplete();
    }

    @Override
    public String authorizationId() {
        return server.getAuthorizationID();
    }
}
