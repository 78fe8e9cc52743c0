package io.pier.console;

import io.pier.security.acl.Principals;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * The web console's settings. The console itself is on exactly when the metrics endpoint is
 * ({@code pier.metrics.enable}): it is served on the same port.
 *
 * @param principal whom the console shows the broker as: with an authorizer configured, it lists
 *     only the topics and groups this principal may DESCRIBE ({@value #PRINCIPAL})
 * @param sampleIntervalMs how often the lag and oldest-age plots take a sample ({@value #SAMPLE_INTERVAL_MS})
 */
public record ConsoleSettings(KafkaPrincipal principal, long sampleIntervalMs) {
    public static final String PRINCIPAL = "pier.console.principal";
    public static final String SAMPLE_INTERVAL_MS = "pier.console.sample.interval.ms";
    static final String DEFAULT_PRINCIPAL = "User:ANONYMOUS";
    /** 10 s: a plot's {@value History#POINTS_PER_SERIES} samples then cover the last hour. */
    static final long DEFAULT_SAMPLE_INTERVAL_MS = 10_000;
    private static final long MIN_SAMPLE_INTERVAL_MS = 10;
    private static final long MAX_SAMPLE_INTERVAL_MS = 3_600_000;

    /** Validated once at start-up; a bad value fails the start naming the setting. */
    public static ConsoleSettings fromProperties(Map<String, String> raw) {
        String principal = raw.getOrDefault(PRINCIPAL, DEFAULT_PRINCIPAL).trim();
        KafkaPrincipal parsed;
        try {
            parsed = Principals.parse(principal);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(PRINCIPAL, principal, e.getMessage());
        }
        String interval = raw.getOrDefault(SAMPLE_INTERVAL_MS, String.valueOf(DEFAULT_SAMPLE_INTERVAL_MS)).trim();
        long intervalMs;
        try {
            intervalMs = Long.parseLong(interval);
        } catch (NumberFormatException e) {
            throw new ConfigException(SAMPLE_INTERVAL_MS, interval, "not a number");
        }
        if (intervalMs < MIN_SAMPLE_INTERVAL_MS || intervalMs > MAX_SAMPLE_INTERVAL_MS) {
            throw new ConfigException(SAMPLE_INTERVAL_MS, interval,
                    "must be between " + MIN_SAMPLE_INTERVAL_MS + " and " + MAX_SAMPLE_INTERVAL_MS);
        }
        return new ConsoleSettings(parsed, intervalMs);
    }

    /** How often an open page reloads its content: the sample interval, within 1 to 10 seconds. */
    long refreshMs() {
        return Math.max(1_000, Math.min(10_000, sampleIntervalMs));
    }
}
