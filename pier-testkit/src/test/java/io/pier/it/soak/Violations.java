package io.pier.it.soak;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the soak's workloads saw that an invariant forbids; checked after every restart. */
final class Violations {
    private static final int KEPT = 100;
    private final List<String> seen = new CopyOnWriteArrayList<>();

    void add(String invariant, String what) {
        if (seen.size() < KEPT) {
            seen.add(invariant + ": " + what);
        }
    }

    List<String> list() {
        return List.copyOf(seen);
    }
}
