package io.pier.server;

import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * One Kafka listener as configured: its name ({@code PLAINTEXT}, {@code CLIENT}...), the security
 * protocol the name maps to, where it binds, and the address Metadata gives to clients that
 * connect through it. An advertised port of 0 means the port the listener bound.
 */
public record ListenerSpec(String name, SecurityProtocol protocol, String host, int port,
        String advertisedHost, int advertisedPort) {

    /** The same listener bound to another port (the embedded broker's restart on a fixed port). */
    ListenerSpec withPort(int newPort) {
        return new ListenerSpec(name, protocol, host, newPort, advertisedHost,
                advertisedPort == port ? newPort : advertisedPort);
    }
}
