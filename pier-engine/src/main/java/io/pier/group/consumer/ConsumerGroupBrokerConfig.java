package io.pier.group.consumer;

import io.pier.group.BrokerSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;

/**
 * Broker settings of consumer-protocol (KIP-848) groups, with Kafka 4.4's names and defaults. The
 * session timeout and heartbeat interval are the defaults of the per-group {@code consumer.*}
 * configs and their bounds.
 *
 * <p>Immutable. Every instance has {@code min <= value <= max} for both timings, a heartbeat
 * interval below the session timeout and at least one known assignor; {@link #fromProperties}
 * throws {@link ConfigException} naming the setting otherwise.
 *
 * @param assignors {@code group.consumer.assignors}: the server-side assignors members may name,
 *     the first being the default
 * @param maxSize {@code group.consumer.max.size}
 * @param reconcileHeartbeatIntervalMs {@code pier.group.consumer.reconcile.heartbeat.interval.ms}:
 *     the interval told to a member that waits for partitions other members still hold
 */
public record ConsumerGroupBrokerConfig(
        int sessionTimeoutMs,
        int minSessionTimeoutMs,
        int maxSessionTimeoutMs,
        int heartbeatIntervalMs,
        int minHeartbeatIntervalMs,
        int maxHeartbeatIntervalMs,
        List<String> assignors,
        int maxSize,
        int reconcileHeartbeatIntervalMs) {

    public static final String SESSION_TIMEOUT_MS = "group.consumer.session.timeout.ms";
    public static final String MIN_SESSION_TIMEOUT_MS = "group.consumer.min.session.timeout.ms";
    public static final String MAX_SESSION_TIMEOUT_MS = "group.consumer.max.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "group.consumer.heartbeat.interval.ms";
    public static final String MIN_HEARTBEAT_INTERVAL_MS = "group.consumer.min.heartbeat.interval.ms";
    public static final String MAX_HEARTBEAT_INTERVAL_MS = "group.consumer.max.heartbeat.interval.ms";
    public static final String ASSIGNORS = "group.consumer.assignors";
    public static final String MAX_SIZE = "group.consumer.max.size";
    /** Pier's own: the heartbeat interval of a member waiting for partitions others still hold. */
    public static final String RECONCILE_HEARTBEAT_INTERVAL_MS = "pier.group.consumer.reconcile.heartbeat.interval.ms";

    public static final ConsumerGroupBrokerConfig DEFAULTS = new ConsumerGroupBrokerConfig(45_000, 45_000, 60_000,
            5_000, 5_000, 15_000, List.of(UniformAssignor.NAME, RangeAssignor.NAME), Integer.MAX_VALUE, 100);

    public ConsumerGroupBrokerConfig {
        assignors = List.copyOf(assignors);
        check(SESSION_TIMEOUT_MS, sessionTimeoutMs, minSessionTimeoutMs, maxSessionTimeoutMs);
        check(HEARTBEAT_INTERVAL_MS, heartbeatIntervalMs, minHeartbeatIntervalMs, maxHeartbeatIntervalMs);
        if (heartbeatIntervalMs >= sessionTimeoutMs) {
            throw new ConfigException(HEARTBEAT_INTERVAL_MS + " must be less than " + SESSION_TIMEOUT_MS + " ("
                    + heartbeatIntervalMs + " >= " + sessionTimeoutMs + ")");
        }
        if (assignors.isEmpty()) {
            throw new ConfigException(ASSIGNORS + " must name at least one assignor");
        }
        for (String a : assignors) {
            if (PartitionAssignor.byName(a) == null) {
                throw new ConfigException(ASSIGNORS + ": unknown assignor '" + a + "' (Pier has "
                        + UniformAssignor.NAME + " and " + RangeAssignor.NAME + ")");
            }
        }
        if (maxSize < 1) {
            throw new ConfigException(MAX_SIZE + " must be at least 1, got " + maxSize);
        }
        if (reconcileHeartbeatIntervalMs < 1) {
            throw new ConfigException(RECONCILE_HEARTBEAT_INTERVAL_MS + " must be at least 1, got "
                    + reconcileHeartbeatIntervalMs);
        }
    }

    private static void check(String name, int value, int min, int max) {
        if (min < 1) {
            throw new ConfigException(name.replace("group.consumer.", "group.consumer.min.") + " must be at least 1");
        }
        if (min > max) {
            throw new ConfigException(name.replace("group.consumer.", "group.consumer.min.") + " (" + min
                    + ") must not exceed " + name.replace("group.consumer.", "group.consumer.max.") + " (" + max + ")");
        }
        if (value < min || value > max) {
            throw new ConfigException(name + " must be between " + min + " and " + max + ", got " + value);
        }
    }

    /** The settings in {@code props} (broker properties), Kafka's defaults for the rest. */
    public static ConsumerGroupBrokerConfig fromProperties(Map<String, String> props) {
        String assignors = props.get(ASSIGNORS);
        List<String> names = new ArrayList<>();
        if (assignors == null) {
            names.addAll(DEFAULTS.assignors);
        } else {
            for (String a : assignors.split(",")) {
                if (!a.isBlank()) {
                    names.add(a.trim().toLowerCase(Locale.ROOT));
                }
            }
        }
        return new ConsumerGroupBrokerConfig(
                BrokerSettings.intOf(props, SESSION_TIMEOUT_MS, DEFAULTS.sessionTimeoutMs),
                BrokerSettings.intOf(props, MIN_SESSION_TIMEOUT_MS, DEFAULTS.minSessionTimeoutMs),
                BrokerSettings.intOf(props, MAX_SESSION_TIMEOUT_MS, DEFAULTS.maxSessionTimeoutMs),
                BrokerSettings.intOf(props, HEARTBEAT_INTERVAL_MS, DEFAULTS.heartbeatIntervalMs),
                BrokerSettings.intOf(props, MIN_HEARTBEAT_INTERVAL_MS, DEFAULTS.minHeartbeatIntervalMs),
                BrokerSettings.intOf(props, MAX_HEARTBEAT_INTERVAL_MS, DEFAULTS.maxHeartbeatIntervalMs),
                names,
                BrokerSettings.intOf(props, MAX_SIZE, DEFAULTS.maxSize),
                BrokerSettings.intOf(props, RECONCILE_HEARTBEAT_INTERVAL_MS, DEFAULTS.reconcileHeartbeatIntervalMs));
    }

    /** The assignor used when no member names one. */
    public String defaultAssignor() {
        return assignors.get(0);
    }
}
