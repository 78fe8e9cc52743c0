package io.pier.security.acl;

import org.apache.kafka.common.security.auth.KafkaPrincipal;

/** Principal strings as Kafka writes them, {@code Type:name} (e.g. {@code User:alice}). */
public final class Principals {
    private Principals() {}

    /** Parses {@code Type:name}; IllegalArgumentException saying what was expected otherwise. */
    public static KafkaPrincipal parse(String s) {
        int colon = s.indexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("expected Type:name, e.g. User:alice, got '" + s + "'");
        }
        return new KafkaPrincipal(s.substring(0, colon), s.substring(colon + 1));
    }
}
