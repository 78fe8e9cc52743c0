package io.pier.server;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.common.config.ConfigException;

/**
 * The {@code ssl.*} settings of one SSL listener, with Kafka's names and defaults, turned into a
 * Netty server {@link SslContext} on the JDK provider. A setting given as
 * {@code listener.name.<listener>.ssl.*} (the listener's name in lower case) wins over the plain
 * {@code ssl.*} one for that listener, as in Kafka. Every failure (a missing file, a wrong
 * password, an unknown protocol) is a {@link ConfigException} naming the setting; passwords are
 * never put in a message.
 *
 * <p>Key stores: {@code PKCS12} and {@code JKS} files, or {@code PEM} given inline in
 * {@code ssl.keystore.certificate.chain} and {@code ssl.keystore.key} (an unencrypted PKCS#8
 * key, or one encrypted with {@code ssl.key.password}). Trust stores: {@code PKCS12}, {@code JKS},
 * or {@code PEM} inline in {@code ssl.truststore.certificates}.
 */
final class TlsSettings {
    static final String KEYSTORE_LOCATION = "ssl.keystore.location";
    static final String KEYSTORE_PASSWORD = "ssl.keystore.password";
    static final String KEYSTORE_TYPE = "ssl.keystore.type";
    static final String KEYSTORE_CERTIFICATE_CHAIN = "ssl.keystore.certificate.chain";
    static final String KEYSTORE_KEY = "ssl.keystore.key";
    static final String KEY_PASSWORD = "ssl.key.password";
    static final String TRUSTSTORE_LOCATION = "ssl.truststore.location";
    static final String TRUSTSTORE_PASSWORD = "ssl.truststore.password";
    static final String TRUSTSTORE_TYPE = "ssl.truststore.type";
    static final String TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates";
    static final String CLIENT_AUTH = "ssl.client.auth";
    static final String ENABLED_PROTOCOLS = "ssl.enabled.protocols";
    static final String CIPHER_SUITES = "ssl.cipher.suites";
    static final String DEFAULT_PROTOCOLS = "TLSv1.2,TLSv1.3";

    private final Map<String, String> props;
    private final String prefix;

    private TlsSettings(Map<String, String> props, String listenerName) {
        this.props = props;
        this.prefix = "listener.name." + listenerName.toLowerCase(Locale.ROOT) + ".";
    }

    static final String PRINCIPAL_MAPPING_RULES = "ssl.principal.mapping.rules";

    /**
     * How the SSL listener {@code listenerName} turns a client certificate's subject into a user
     * name: Kafka's {@code ssl.principal.mapping.rules} ({@code RULE:pattern/replacement/[LU]},
     * {@code DEFAULT}), the whole distinguished name by default.
     */
    static SslPrincipalMapper principalMapper(Map<String, String> props, String listenerName) {
        TlsSettings s = new TlsSettings(props, listenerName);
        String rules = s.value(PRINCIPAL_MAPPING_RULES, "DEFAULT");
        try {
            return SslPrincipalMapper.fromRules(rules);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.name(PRINCIPAL_MAPPING_RULES), rules, e.getMessage());
        }
    }

    /** The server context for the SSL listener {@code listenerName}. */
    static SslContext serverContext(Map<String, String> props, String listenerName) {
        return new TlsSettings(props, listenerName).build();
    }

    private SslContext build() {
        SslContextBuilder builder = keyMaterial();
        trustMaterial(builder);
        builder.sslProvider(SslProvider.JDK).clientAuth(clientAuth());
        List<String> protocols = list(ENABLED_PROTOCOLS, DEFAULT_PROTOCOLS);
        if (protocols.isEmpty()) {
            throw new ConfigException(name(ENABLED_PROTOCOLS), value(ENABLED_PROTOCOLS), "no TLS protocol enabled");
        }
        builder.protocols(protocols);
        List<String> ciphers = list(CIPHER_SUITES, "");
        if (!ciphers.isEmpty()) {
            builder.ciphers(ciphers);
        }
        try {
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("Invalid TLS settings (" + name(ENABLED_PROTOCOLS) + ", " + name(CIPHER_SUITES)
                    + ", key store " + name(KEYSTORE_LOCATION) + "): " + e.getMessage());
        }
    }

    private SslContextBuilder keyMaterial() {
        String type = value(KEYSTORE_TYPE, "JKS").toUpperCase(Locale.ROOT);
        if (type.equals("PEM")) {
            String chain = value(KEYSTORE_CERTIFICATE_CHAIN);
            String key = value(KEYSTORE_KEY);
            if (chain == null || key == null) {
                throw new ConfigException(name(KEYSTORE_CERTIFICATE_CHAIN), null, "a PEM key store needs "
                        + name(KEYSTORE_CERTIFICATE_CHAIN) + " and " + name(KEYSTORE_KEY));
            }
            try {
                return SslContextBuilder.forServer(stream(chain), stream(key), value(KEY_PASSWORD));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("Invalid PEM key store (" + name(KEYSTORE_CERTIFICATE_CHAIN) + ", "
                        + name(KEYSTORE_KEY) + "): " + e.getMessage());
            }
        }
        String location = value(KEYSTORE_LOCATION);
        if (location == null) {
            throw new ConfigException(name(KEYSTORE_LOCATION), null, "an SSL listener needs a key store");
        }
        String password = value(KEYSTORE_PASSWORD);
        KeyStore store = load(KEYSTORE_LOCATION, KEYSTORE_PASSWORD, type, location, password);
        String keyPassword = value(KEY_PASSWORD, password);
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, keyPassword == null ? new char[0] : keyPassword.toCharArray());
            return SslContextBuilder.forServer(kmf);
        } catch (UnrecoverableKeyException e) {
            throw new ConfigException("The key in " + location + " (" + name(KEYSTORE_LOCATION)
                    + ") cannot be recovered with " + name(KEY_PASSWORD) + ": " + e.getMessage());
        } catch (GeneralSecurityException e) {
            throw new ConfigException("The key store " + location + " (" + name(KEYSTORE_LOCATION)
                    + ") cannot be used: " + e);
        }
    }

    private void trustMaterial(SslContextBuilder builder) {
        String type = value(TRUSTSTORE_TYPE, "JKS").toUpperCase(Locale.ROOT);
        if (type.equals("PEM")) {
            String certificates = value(TRUSTSTORE_CERTIFICATES);
            if (certificates == null) {
                throw new ConfigException(name(TRUSTSTORE_CERTIFICATES), null, "a PEM trust store needs certificates");
            }
            try {
                builder.trustManager(stream(certificates));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(name(TRUSTSTORE_CERTIFICATES), "[PEM]", e.getMessage());
            }
            return;
        }
        String location = value(TRUSTSTORE_LOCATION);
        if (location == null) {
            return; // the JDK's default trust anchors, as in Kafka
        }
        KeyStore store = load(TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, type, location, value(TRUSTSTORE_PASSWORD));
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            builder.trustManager(tmf);
        } catch (GeneralSecurityException e) {
            throw new ConfigException("The trust store " + location + " (" + name(TRUSTSTORE_LOCATION)
                    + ") cannot be used: " + e);
        }
    }

    private KeyStore load(String locationKey, String passwordKey, String type, String location, String password) {
        KeyStore store;
        try {
            store = KeyStore.getInstance(type);
        } catch (GeneralSecurityException e) {
            throw new ConfigException(name(locationKey.replace("location", "type")), type,
                    "unknown store type (expected PKCS12, JKS or PEM)");
        }
        try (InputStream in = Files.newInputStream(Path.of(location))) {
            store.load(in, password == null ? null : password.toCharArray());
            return store;
        } catch (NoSuchFileException e) {
            throw new ConfigException(name(locationKey), location, "no such file");
        } catch (IOException e) {
            // KeyStore reports a wrong password as an IOException caused by UnrecoverableKeyException.
            if (e.getCause() instanceof UnrecoverableKeyException || String.valueOf(e.getMessage()).contains("password")) {
                throw new ConfigException("The store " + location + " (" + name(locationKey)
                        + ") cannot be opened with " + name(passwordKey) + ": wrong password?");
            }
            throw new ConfigException(name(locationKey), location, "cannot be read as " + type + ": " + e.getMessage());
        } catch (GeneralSecurityException e) {
            throw new ConfigException(name(locationKey), location, "cannot be read as " + type + ": " + e.getMessage());
        }
    }

    private ClientAuth clientAuth() {
        String v = value(CLIENT_AUTH, "none").trim().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "none" -> ClientAuth.NONE;
            case "requested" -> ClientAuth.OPTIONAL;
            case "required" -> ClientAuth.REQUIRE;
            default -> throw new ConfigException(name(CLIENT_AUTH), v, "expected none, requested or required");
        };
    }

    private List<String> list(String key, String defaultValue) {
        List<String> out = new ArrayList<>();
        for (String s : value(key, defaultValue).split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    /** The setting's name as given: the listener-prefixed one when present. */
    private String name(String key) {
        return props.containsKey(prefix + key) ? prefix + key : key;
    }

    private String value(String key) {
        String v = props.get(prefix + key);
        return v != null ? v : props.get(key);
    }

    private String value(String key, String defaultValue) {
        String v = value(key);
        return v == null ? defaultValue : v;
    }

    private static InputStream stream(String pem) {
        return new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII));
    }
}
