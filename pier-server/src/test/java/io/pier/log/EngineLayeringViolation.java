package io.pier.log;

import io.pier.service.Logs;

/** Test-only fixture for LayeringTest: engine code that reaches a service. */
public final class EngineLayeringViolation {
    private EngineLayeringViolation() {}

    public static Object reaches(Logs logs) {
        return logs;
    }
}
