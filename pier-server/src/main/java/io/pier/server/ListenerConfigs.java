package io.pier.server;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Parses {@code listeners}, {@code advertised.listeners} and {@code listener.security.protocol.map}
 * with Kafka's syntax and meaning. Listeners named in {@code controller.listener.names} are not
 * served: Pier has no controller quorum, and a combined-mode Kafka {@code server.properties} lists
 * one. {@code inter.broker.listener.name} must name a listener, as in Kafka, and is otherwise
 * unused on a single node. SASL listeners are configured by {@link SaslSettings}.
 */
final class ListenerConfigs {
    static final String LISTENERS = "listeners";
    static final String ADVERTISED_LISTENERS = "advertised.listeners";
    static final String PROTOCOL_MAP = "listener.security.protocol.map";
    static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    static final String INTER_BROKER_LISTENER_NAME = "inter.broker.listener.name";
    static final String DEFAULT_HOST = "127.0.0.1";

    private ListenerConfigs() {}

    static List<ListenerSpec> parse(Map<String, String> props) {
        Map<String, SecurityProtocol> protocols = protocolMap(props.get(PROTOCOL_MAP));
        Set<String> controllerNames = new HashSet<>();
        for (String name : split(props.getOrDefault(CONTROLLER_LISTENER_NAMES, ""))) {
            controllerNames.add(name.toUpperCase(Locale.ROOT));
        }
        String listenersValue = props.getOrDefault(LISTENERS, "PLAINTEXT://" + DEFAULT_HOST + ":9092");
        Map<String, String[]> bound = endpoints(LISTENERS, listenersValue);
        Map<String, String[]> advertised = props.containsKey(ADVERTISED_LISTENERS)
                ? endpoints(ADVERTISED_LISTENERS, props.get(ADVERTISED_LISTENERS)) : Map.of();
        for (String name : advertised.keySet()) {
            if (!bound.containsKey(name)) {
                throw new ConfigException(ADVERTISED_LISTENERS, props.get(ADVERTISED_LISTENERS),
                        "listener " + name + " is not in " + LISTENERS);
            }
        }
        List<ListenerSpec> out = new ArrayList<>();
        for (Map.Entry<String, String[]> e : bound.entrySet()) {
            String name = e.getKey();
            SecurityProtocol protocol = protocols.get(name);
            if (protocol == null) {
                throw new ConfigException(LISTENERS, listenersValue, "listener " + name
                        + " has no security protocol in " + PROTOCOL_MAP + " (" + protocols.keySet() + ")");
            }
            if (controllerNames.contains(name)) {
                continue;
            }
            String host = e.getValue()[0].isEmpty() ? DEFAULT_HOST : e.getValue()[0];
            int port = BrokerConfig.intIn(LISTENERS, e.getValue()[1], 0, 65535);
            String[] adv = advertised.getOrDefault(name, e.getValue());
            String advHost = adv[0].isEmpty() ? host : adv[0];
            int advPort = BrokerConfig.intIn(ADVERTISED_LISTENERS, adv[1], 0, 65535);
            out.add(new ListenerSpec(name, protocol, host, port, advHost, advPort == 0 ? port : advPort));
        }
        if (out.isEmpty()) {
            throw new ConfigException(LISTENERS, listenersValue, "no listener to serve clients on (all are in "
                    + CONTROLLER_LISTENER_NAMES + ")");
        }
        String interBroker = props.get(INTER_BROKER_LISTENER_NAME);
        if (interBroker != null && !bound.containsKey(interBroker.trim().toUpperCase(Locale.ROOT))) {
            throw new ConfigException(INTER_BROKER_LISTENER_NAME, interBroker, "no such listener in " + LISTENERS);
        }
        return out;
    }

    /** Kafka's default map: each protocol's own name maps to it. */
    private static Map<String, SecurityProtocol> protocolMap(String value) {
        Map<String, SecurityProtocol> map = new LinkedHashMap<>();
        if (value == null || value.isBlank()) {
            for (SecurityProtocol p : SecurityProtocol.values()) {
                map.put(p.name, p);
            }
            return map;
        }
        for (String entry : split(value)) {
            int colon = entry.indexOf(':');
            if (colon <= 0) {
                throw new ConfigException(PROTOCOL_MAP, value, "expected NAME:PROTOCOL, got '" + entry + "'");
            }
            String name = entry.substring(0, colon).trim().toUpperCase(Locale.ROOT);
            String protocol = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            if (!SecurityProtocol.names().contains(protocol)) {
                throw new ConfigException(PROTOCOL_MAP, value, "unknown security protocol " + protocol
                        + " for listener " + name + " (expected one of " + SecurityProtocol.names() + ")");
            }
            map.put(name, SecurityProtocol.forName(protocol));
        }
        return map;
    }

    /** NAME -> {host, port}, in the order given; names are unique, as Kafka requires. */
    private static Map<String, String[]> endpoints(String setting, String value) {
        Map<String, String[]> out = new LinkedHashMap<>();
        for (String entry : split(value)) {
            int schemeEnd = entry.indexOf("://");
            if (schemeEnd <= 0) {
                throw new ConfigException(setting, value, "expected NAME://host:port, got '" + entry + "'");
            }
            String name = entry.substring(0, schemeEnd).trim().toUpperCase(Locale.ROOT);
            String hostPort = entry.substring(schemeEnd + 3);
            int colon = hostPort.lastIndexOf(':');
            if (colon < 0) {
                throw new ConfigException(setting, value, "expected NAME://host:port, got '" + entry + "'");
            }
            String host = hostPort.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (out.put(name, new String[] {host, hostPort.substring(colon + 1)}) != null) {
                throw new ConfigException(setting, value, "listener " + name + " is given twice");
            }
        }
        if (out.isEmpty()) {
            throw new ConfigException(setting, value, "expected NAME://host:port");
        }
        return out;
    }

    private static List<String> split(String value) {
        List<String> out = new ArrayList<>();
        for (String s : value.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }
}
