package io.pier.server;

import io.pier.network.ConnectionLimits;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;

/**
 * Kafka's connection limits as configured: {@code max.connections},
 * {@code listener.name.<listener>.max.connections}, {@code max.connections.per.ip} and
 * {@code max.connections.per.ip.overrides} ({@code host:count,...}, a host name or an address).
 * Checked with Kafka's rules when the config is read: every limit is a whole number of at least
 * 0, an override entry is {@code host:count} with a host of valid characters, and
 * {@code max.connections.per.ip} may be 0 only with overrides (else no client could connect).
 * Host names are resolved by {@link #limits}, as Kafka resolves them when its socket server
 * starts (one address per name; an unknown name stops the start).
 *
 * <p>As in Kafka, with more than one listener the inter-broker listener
 * ({@code inter.broker.listener.name}, else the one named after
 * {@code security.inter.broker.protocol}, {@code PLAINTEXT} by default) is never refused by
 * {@code max.connections}, only by its own limit.
 */
record ConnectionLimitSettings(int maxConnections, int maxConnectionsPerIp, Map<String, Integer> perIpOverrides,
        Map<String, Integer> perListener, String exemptListener) {
    static final String MAX_CONNECTIONS = "max.connections";
    static final String MAX_CONNECTIONS_PER_IP = "max.connections.per.ip";
    static final String MAX_CONNECTIONS_PER_IP_OVERRIDES = "max.connections.per.ip.overrides";
    static final String SECURITY_INTER_BROKER_PROTOCOL = "security.inter.broker.protocol";

    ConnectionLimitSettings {
        // In the order given: of two host names with one address, the later wins.
        perIpOverrides = Collections.unmodifiableMap(new LinkedHashMap<>(perIpOverrides));
        perListener = Map.copyOf(perListener);
    }

    static ConnectionLimitSettings parse(Map<String, String> props, List<ListenerSpec> listeners) {
        String max = String.valueOf(Integer.MAX_VALUE);
        int maxConnections = BrokerConfig.intIn(MAX_CONNECTIONS, props.getOrDefault(MAX_CONNECTIONS, max), 0,
                Integer.MAX_VALUE);
        int perIp = BrokerConfig.intIn(MAX_CONNECTIONS_PER_IP, props.getOrDefault(MAX_CONNECTIONS_PER_IP, max), 0,
                Integer.MAX_VALUE);
        Map<String, Integer> overrides = overrides(props.getOrDefault(MAX_CONNECTIONS_PER_IP_OVERRIDES, ""));
        if (perIp == 0 && overrides.isEmpty()) {
            throw new ConfigException(MAX_CONNECTIONS_PER_IP, "0", "can be 0 only if "
                    + MAX_CONNECTIONS_PER_IP_OVERRIDES + " is set (else no client could connect)");
        }
        Map<String, Integer> perListener = new LinkedHashMap<>();
        for (ListenerSpec listener : listeners) {
            String key = "listener.name." + listener.name().toLowerCase(Locale.ROOT) + "." + MAX_CONNECTIONS;
            String value = props.get(key);
            if (value != null) {
                perListener.put(listener.name(), BrokerConfig.intIn(key, value, 0, Integer.MAX_VALUE));
            }
        }
        return new ConnectionLimitSettings(maxConnections, perIp, overrides, perListener, exempt(props, listeners));
    }

    /** Kafka's {@code host:count,...}: split at the last colon, so an IPv6 address may be a host. */
    private static Map<String, Integer> overrides(String value) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (String entry : value.split(",")) {
            String e = entry.trim();
            if (e.isEmpty()) {
                continue;
            }
            int colon = e.lastIndexOf(':');
            String host = colon < 0 ? "" : e.substring(0, colon).trim();
            if (host.isEmpty()) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, value,
                        "expected host:count, got '" + e + "'");
            }
            if (!Utils.validHostPattern(host)) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, value, "invalid address '" + host + "'");
            }
            int count;
            try {
                count = Integer.parseInt(e.substring(colon + 1).trim());
            } catch (NumberFormatException ex) {
                count = -1;
            }
            if (count < 0) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, value,
                        "expected host:count with a count of at least 0, got '" + e + "'");
            }
            out.put(host, count); // a host given twice: the last wins, as in Kafka
        }
        return out;
    }

    private static String exempt(Map<String, String> props, List<ListenerSpec> listeners) {
        if (listeners.size() < 2) {
            return null;
        }
        String name = props.get(ListenerConfigs.INTER_BROKER_LISTENER_NAME);
        if (name == null) {
            name = props.getOrDefault(SECURITY_INTER_BROKER_PROTOCOL, "PLAINTEXT");
        }
        String upper = name.trim().toUpperCase(Locale.ROOT);
        return listeners.stream().anyMatch(l -> l.name().equals(upper)) ? upper : null;
    }

    /** The counters the network admits connections with; resolves the override host names. */
    ConnectionLimits limits() {
        Map<InetAddress, Integer> byAddress = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> e : perIpOverrides.entrySet()) {
            try {
                byAddress.put(InetAddress.getByName(e.getKey()), e.getValue());
            } catch (UnknownHostException ex) {
                throw new ConfigException(MAX_CONNECTIONS_PER_IP_OVERRIDES, e.getKey() + ":" + e.getValue(),
                        "unknown host " + e.getKey());
            }
        }
        return new ConnectionLimits(maxConnections, maxConnectionsPerIp, byAddress, perListener, exemptListener);
    }
}
