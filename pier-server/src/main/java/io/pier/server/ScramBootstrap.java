package io.pier.server;

import io.pier.security.ScramCredentialStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * {@code pier.sasl.scram.bootstrap}: the first SCRAM users, in the syntax of
 * {@code kafka-storage format --add-scram}, several separated by commas:
 * {@code SCRAM-SHA-256=[name=admin,password=admin-secret],SCRAM-SHA-512=[name=admin,password="a,b"]}
 * ({@code iterations=} optional, default 4096). Like a format, it only adds: a user who already has
 * a credential for the mechanism keeps it, so a password changed with kafka-configs survives restarts.
 */
final class ScramBootstrap {
    static final String SETTING = "pier.sasl.scram.bootstrap";

    record Entry(ScramMechanism mechanism, String name, String password, int iterations) {}

    private ScramBootstrap() {}

    static void apply(Map<String, String> props, ScramCredentialStore store) throws IOException {
        for (Entry e : parse(props.get(SETTING))) {
            store.putIfAbsent(e.name(), e.mechanism(), e.password(), e.iterations());
        }
    }

    static List<Entry> parse(String value) {
        List<Entry> out = new ArrayList<>();
        if (value == null || value.isBlank()) {
            return out;
        }
        int pos = 0;
        while (pos < value.length()) {
            int open = value.indexOf("=[", pos);
            if (open < 0) {
                throw bad("expected MECHANISM=[name=...,password=...]");
            }
            String mechanismName = value.substring(pos, open).trim();
            ScramMechanism mechanism = ScramMechanism.forMechanismName(mechanismName);
            if (mechanism == null) {
                throw bad("unknown SCRAM mechanism '" + mechanismName + "' (SCRAM-SHA-256 or SCRAM-SHA-512)");
            }
            Map<String, String> fields = new LinkedHashMap<>();
            pos = open + 2;
            while (true) {
                int eq = value.indexOf('=', pos);
                if (eq < 0) {
                    throw bad("expected key=value inside [...]");
                }
                String key = value.substring(pos, eq).trim().toLowerCase(java.util.Locale.ROOT);
                pos = eq + 1;
                String v;
                if (pos < value.length() && value.charAt(pos) == '"') {
                    int close = value.indexOf('"', pos + 1);
                    if (close < 0) {
                        throw bad("unterminated quote");
                    }
                    v = value.substring(pos + 1, close);
                    pos = close + 1;
                } else {
                    int end = pos;
                    while (end < value.length() && value.charAt(end) != ',' && value.charAt(end) != ']') {
                        end++;
                    }
                    v = value.substring(pos, end).trim();
                    pos = end;
                }
                fields.put(key, v);
                if (pos >= value.length()) {
                    throw bad("missing ']'");
                }
                char c = value.charAt(pos++);
                if (c == ']') {
                    break;
                }
                if (c != ',') {
                    throw bad("expected ',' or ']' after " + key);
                }
            }
            String name = fields.get("name");
            String password = fields.get("password");
            if (name == null || name.isEmpty() || password == null || password.isEmpty()) {
                throw bad("each entry needs name= and password=");
            }
            int iterations = fields.containsKey("iterations")
                    ? BrokerConfig.intIn(SETTING, fields.get("iterations"), mechanism.minIterations(),
                            mechanism.maxIterations())
                    : ScramCredentialStore.DEFAULT_ITERATIONS;
            for (String k : fields.keySet()) {
                if (!List.of("name", "password", "iterations").contains(k)) {
                    throw bad("unknown field '" + k + "' (name, password, iterations)");
                }
            }
            out.add(new Entry(mechanism, name, password, iterations));
            while (pos < value.length() && (value.charAt(pos) == ',' || Character.isWhitespace(value.charAt(pos)))) {
                pos++;
            }
        }
        return out;
    }

    /** Never echoes the value: it holds passwords. */
    private static ConfigException bad(String why) {
        return new ConfigException(SETTING, "[hidden]", why);
    }
}
