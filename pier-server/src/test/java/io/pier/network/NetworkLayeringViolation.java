package io.pier.network;

import io.pier.server.Pier;

/** Test-only fixture for LayeringTest: the network reaching the broker wiring. */
public final class NetworkLayeringViolation {
    private NetworkLayeringViolation() {}

    public static String reaches(Pier pier) {
        return pier.bootstrapServers();
    }
}
