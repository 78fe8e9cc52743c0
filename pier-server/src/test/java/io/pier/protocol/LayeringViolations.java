package io.pier.protocol;

import io.pier.server.Pier;

/** Test-only fixture for LayeringTest: a protocol class that reaches the broker wiring. */
public final class LayeringViolations {
    private LayeringViolations() {}

    public static String wiring(Pier pier) {
        return pier.bootstrapServers();
    }
}
