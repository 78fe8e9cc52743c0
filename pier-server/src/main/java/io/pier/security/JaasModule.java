package io.pier.security;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One login module of a {@code sasl.jaas.config} value, parsed but never loaded: Pier reads the
 * options of Kafka's PLAIN and SCRAM modules and refuses every other class name, so a JAAS value
 * cannot make the broker instantiate a class (the CVE-2023-25194 class of bugs).
 */
public record JaasModule(String className, Map<String, String> options) {
    public static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule";
    public static final String SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule";

    /**
     * Parses {@code Class flag key="value" ...;} with exactly one module, as Kafka requires of a
     * broker's listener setting. Throws IllegalArgumentException with a message that names no option value.
     */
    public static JaasModule parse(String value) {
        Tokens t = new Tokens(value);
        String className = t.word();
        if (className == null) {
            throw new IllegalArgumentException("expected 'LoginModuleClass required key=\"value\" ...;'");
        }
        String flag = t.word();
        if (flag == null || !flag.matches("(?i)required|requisite|sufficient|optional")) {
            throw new IllegalArgumentException("expected a control flag (required) after " + className);
        }
        Map<String, String> options = new LinkedHashMap<>();
        while (true) {
            t.skipSpace();
            if (t.peek() == ';') {
                t.pos++;
                break;
            }
            String key = t.word();
            if (key == null) {
                throw new IllegalArgumentException("expected key=value or ';' in the options of " + className);
            }
            t.skipSpace();
            if (t.peek() != '=') {
                throw new IllegalArgumentException("expected '=' after option " + key);
            }
            t.pos++;
            String v = t.valueToken();
            if (v == null) {
                throw new IllegalArgumentException("option " + key + " has no value");
            }
            options.put(key, v);
        }
        t.skipSpace();
        if (t.pos < value.length()) {
            throw new IllegalArgumentException("exactly one login module is allowed");
        }
        if (!className.equals(PLAIN) && !className.equals(SCRAM)) {
            throw new IllegalArgumentException("login module " + className + " is not allowed (only " + PLAIN
                    + " and " + SCRAM + ")");
        }
        return new JaasModule(className, Map.copyOf(options));
    }

    private static final class Tokens {
        private final String s;
        private int pos;

        Tokens(String s) {
            this.s = s;
        }

        int peek() {
            return pos < s.length() ? s.charAt(pos) : -1;
        }

        void skipSpace() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        String word() {
            skipSpace();
            int start = pos;
            while (pos < s.length() && !Character.isWhitespace(s.charAt(pos)) && "=;\"".indexOf(s.charAt(pos)) < 0) {
                pos++;
            }
            return pos == start ? null : s.substring(start, pos);
        }

        String valueToken() {
            skipSpace();
            if (peek() != '"') {
                return word();
            }
            pos++;
            StringBuilder out = new StringBuilder();
            while (pos < s.length()) {
                char c = s.charAt(pos++);
                if (c == '"') {
                    return out.toString();
                }
                if (c == '\\' && pos < s.length()) {
                    c = s.charAt(pos++);
                }
                out.append(c);
            }
            throw new IllegalArgumentException("unterminated quoted value");
        }
    }
}
