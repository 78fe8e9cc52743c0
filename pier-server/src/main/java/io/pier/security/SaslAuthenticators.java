package io.pier.security;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * What one SASL listener accepts: its enabled mechanisms in the configured order, the PLAIN users,
 * the SCRAM credential store, how long a failed login waits before its answer
 * ({@code connection.failed.authentication.delay.ms}) and the largest frame before authentication.
 */
public final class SaslAuthenticators {
    public static final String PLAIN = "PLAIN";
    private final List<String> enabled;
    private final Map<String, byte[]> plainPasswords;
    private final ScramCredentialStore scram;
    private final long failureDelayMs;
    private final int maxReceiveBytes;
    private final long reauthMs;

    /** Without re-authentication ({@code connections.max.reauth.ms} 0). */
    public SaslAuthenticators(List<String> enabled, Map<String, String> plainUsers, ScramCredentialStore scram,
            long failureDelayMs, int maxReceiveBytes) {
        this(enabled, plainUsers, scram, failureDelayMs, maxReceiveBytes, 0);
    }

    /** {@code plainUsers}: user name to password, from {@code user_<name>} options. */
    public SaslAuthenticators(List<String> enabled, Map<String, String> plainUsers, ScramCredentialStore scram,
            long failureDelayMs, int maxReceiveBytes, long reauthMs) {
        this.enabled = List.copyOf(enabled);
        this.reauthMs = reauthMs;
        Map<String, byte[]> pw = new LinkedHashMap<>();
        plainUsers.forEach((u, p) -> pw.put(u, p.getBytes(StandardCharsets.UTF_8)));
        this.plainPasswords = Map.copyOf(pw);
        this.scram = scram;
        this.failureDelayMs = failureDelayMs;
        this.maxReceiveBytes = maxReceiveBytes;
    }

    public List<String> enabledMechanisms() {
        return enabled;
    }

    public long failureDelayMs() {
        return failureDelayMs;
    }

    /**
     * {@code connections.max.reauth.ms}: a session's lifetime, after which the client must
     * re-authenticate on the connection before any other request; 0 for sessions without end.
     */
    public long reauthMs() {
        return reauthMs;
    }

    public int maxReceiveBytes() {
        return maxReceiveBytes;
    }

    /** A new exchange for {@code mechanism}, or null when it is not enabled here. */
    public SaslExchange start(String mechanism) {
        if (mechanism == null || !enabled.contains(mechanism)) {
            return null;
        }
        if (mechanism.equals(PLAIN)) {
            return new PlainExchange(plainPasswords);
        }
        return new ScramExchange(ScramMechanism.forMechanismName(mechanism), scram);
    }
}
