package io.pier.service;

import java.util.Map;

/**
 * This broker as clients see it: its node id and the address it serves on. {@code host} and
 * {@code port} are the first listener's advertised address; {@code listeners} holds every
 * listener's, by name, so that a client is told the address of the listener it connected through.
 */
public record NodeInfo(int nodeId, String host, int port, String clusterId, Map<String, Address> listeners) {
    /** An advertised host and port. */
    public record Address(String host, int port) {}

    public NodeInfo {
        listeners = Map.copyOf(listeners);
    }

    /** A node with one unnamed listener. */
    public NodeInfo(int nodeId, String host, int port, String clusterId) {
        this(nodeId, host, port, clusterId, Map.of());
    }

    /** This node with the advertised address of the listener {@code connection} came through. */
    public NodeInfo seenFrom(ClientConnection connection) {
        Address a = connection == null ? null : listeners.get(connection.listenerName());
        return a == null ? this : new NodeInfo(nodeId, a.host(), a.port(), clusterId, listeners);
    }
}
