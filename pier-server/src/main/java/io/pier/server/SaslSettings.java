package io.pier.server;

import io.pier.security.JaasModule;
import io.pier.security.SaslAuthenticators;
import io.pier.security.ScramCredentialStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * The SASL settings of one SASL_PLAINTEXT or SASL_SSL listener, with Kafka's names:
 * {@code sasl.enabled.mechanisms} (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; PLAIN when unset; GSSAPI
 * and OAUTHBEARER stop the start), and per mechanism
 * {@code listener.name.<listener>.<mechanism>.sasl.jaas.config}, which must name Kafka's
 * PlainLoginModule or ScramLoginModule. PLAIN users come from its {@code user_<name>} options;
 * SCRAM users from the credential store. As in Kafka, a {@code listener.name.<listener>.} prefix
 * wins for the other settings too, and there is no broker-wide {@code sasl.jaas.config}.
 */
final class SaslSettings {
    static final String ENABLED_MECHANISMS = "sasl.enabled.mechanisms";
    static final String JAAS_CONFIG = "sasl.jaas.config";
    static final String FAILED_AUTHENTICATION_DELAY_MS = "connection.failed.authentication.delay.ms";
    static final String MAX_RECEIVE_SIZE = "sasl.server.max.receive.size";
    static final String MAX_REAUTH_MS = "connections.max.reauth.ms";
    static final List<String> SUPPORTED = List.of(SaslAuthenticators.PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512");

    private final Map<String, String> props;
    private final String listenerLower;
    private final String prefix;

    private SaslSettings(Map<String, String> props, String listenerName) {
        this.props = props;
        this.listenerLower = listenerName.toLowerCase(Locale.ROOT);
        this.prefix = "listener.name." + listenerLower + ".";
    }

    static SaslAuthenticators forListener(Map<String, String> props, String listenerName, ScramCredentialStore scram) {
        return new SaslSettings(props, listenerName).build(scram);
    }

    private SaslAuthenticators build(ScramCredentialStore scram) {
        List<String> mechanisms = mechanisms();
        Map<String, String> plainUsers = new LinkedHashMap<>();
        for (String mechanism : mechanisms) {
            String key = prefix + mechanism.toLowerCase(Locale.ROOT) + "." + JAAS_CONFIG;
            String value = props.get(key);
            boolean plain = mechanism.equals(SaslAuthenticators.PLAIN);
            if (value == null) {
                if (plain) {
                    throw new ConfigException(key, null, "listener " + listenerLower.toUpperCase(Locale.ROOT)
                            + " enables PLAIN and needs its users: " + JaasModule.PLAIN
                            + " required user_<name>=\"<password>\" ...;");
                }
                continue; // SCRAM reads its users from the credential store; the module has no options to give
            }
            JaasModule module;
            try {
                module = JaasModule.parse(value);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(key, "[hidden]", e.getMessage());
            }
            String expected = plain ? JaasModule.PLAIN : JaasModule.SCRAM;
            if (!module.className().equals(expected)) {
                throw new ConfigException(key, "[hidden]", mechanism + " needs " + expected + ", not "
                        + module.className());
            }
            if (plain) {
                module.options().forEach((k, v) -> {
                    if (k.startsWith("user_") && k.length() > 5) {
                        plainUsers.put(k.substring(5), v);
                    }
                });
            }
        }
        long delay = BrokerConfig.longIn(name(FAILED_AUTHENTICATION_DELAY_MS),
                value(FAILED_AUTHENTICATION_DELAY_MS, "100"), 0, Long.MAX_VALUE);
        int maxReceive = BrokerConfig.intIn(name(MAX_RECEIVE_SIZE), value(MAX_RECEIVE_SIZE, "524288"), 1024,
                Integer.MAX_VALUE);
        long reauth = BrokerConfig.longIn(name(MAX_REAUTH_MS), value(MAX_REAUTH_MS, "0"), 0, Long.MAX_VALUE);
        return new SaslAuthenticators(mechanisms, plainUsers, scram, delay, maxReceive, reauth);
    }

    private List<String> mechanisms() {
        String value = value(ENABLED_MECHANISMS, SaslAuthenticators.PLAIN);
        List<String> out = new ArrayList<>();
        for (String s : value.split(",")) {
            String m = s.trim().toUpperCase(Locale.ROOT);
            if (m.isEmpty()) {
                continue;
            }
            if (!SUPPORTED.contains(m)) {
                throw new ConfigException(name(ENABLED_MECHANISMS), value, "Pier does not support SASL mechanism "
                        + m + " (supported: " + String.join(", ", SUPPORTED) + ")");
            }
            if (!out.contains(m)) {
                out.add(m);
            }
        }
        if (out.isEmpty()) {
            throw new ConfigException(name(ENABLED_MECHANISMS), value, "no SASL mechanism enabled");
        }
        for (String m : out) {
            if (!m.equals(SaslAuthenticators.PLAIN) && ScramMechanism.forMechanismName(m) == null) {
                throw new IllegalStateException(m);
            }
        }
        return out;
    }

    private String name(String key) {
        return props.containsKey(prefix + key) ? prefix + key : key;
    }

    private String value(String key, String defaultValue) {
        String v = props.get(prefix + key);
        if (v == null) {
            v = props.get(key);
        }
        return v == null ? defaultValue : v;
    }
}
