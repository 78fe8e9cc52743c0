package io.pier.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The TLS and SASL settings of the security rows: one self-signed server certificate (RSA 2048,
 * for 127.0.0.1 and localhost) in a PKCS12 key store, the same certificate in a PKCS12 trust store
 * for the clients, both made once per run with the JDK's {@code keytool}; and one SASL/PLAIN user.
 * Every broker gets the same stores and the same settings, under Kafka's names (which Pier reads
 * too), so the listeners differ only in the broker serving them. Throwaway: the password is public.
 */
final class Security {
    /** The listener names, which are also their security protocols. */
    static final String SSL = "SSL";
    static final String SASL_SSL = "SASL_SSL";
    static final String PLAINTEXT = "PLAINTEXT";
    static final String MECHANISM = "PLAIN";
    private static final String STORE_PASSWORD = "pier-bench-secret";
    private static final String USER = "bench";
    private static final String USER_PASSWORD = "bench-secret";
    private static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    private static final long KEYTOOL_TIMEOUT_SECONDS = 120;

    final Path keyStore;
    final Path trustStore;

    private Security(Path keyStore, Path trustStore) {
        this.keyStore = keyStore;
        this.trustStore = trustStore;
    }

    /** Makes the certificate and both stores in {@code dir}. */
    static Security create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path ks = dir.resolve("broker-keystore.p12");
        Path cert = dir.resolve("broker.crt");
        Path ts = dir.resolve("client-truststore.p12");
        keytool(dir, "-genkeypair", "-alias", "broker", "-dname", "CN=localhost", "-ext",
                "san=ip:127.0.0.1,dns:localhost", "-keyalg", "RSA", "-keysize", "2048", "-validity", "7",
                "-storetype", "PKCS12", "-keystore", ks.toString(), "-storepass", STORE_PASSWORD,
                "-keypass", STORE_PASSWORD);
        keytool(dir, "-exportcert", "-alias", "broker", "-rfc", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", ks.toString(), "-storepass", STORE_PASSWORD);
        keytool(dir, "-importcert", "-noprompt", "-alias", "broker", "-file", cert.toString(), "-storetype",
                "PKCS12", "-keystore", ts.toString(), "-storepass", STORE_PASSWORD);
        return new Security(ks, ts);
    }

    private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("keytool " + args[0] + " failed: " + out.trim());
        }
    }

    /**
     * The broker side, for an SSL and a SASL_SSL listener named after their protocols: the key
     * store (no client certificates asked for), PLAIN as the one SASL mechanism, and the PLAIN user
     * in the SASL_SSL listener's JAAS config.
     */
    Map<String, String> serverSettings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("ssl.keystore.location", keyStore.toAbsolutePath().toString());
        s.put("ssl.keystore.password", STORE_PASSWORD);
        s.put("ssl.keystore.type", "PKCS12");
        s.put("ssl.key.password", STORE_PASSWORD);
        s.put("sasl.enabled.mechanisms", MECHANISM);
        s.put("listener.name." + SASL_SSL.toLowerCase(Locale.ROOT) + ".plain.sasl.jaas.config",
                PLAIN_MODULE + " required user_" + USER + "=\"" + USER_PASSWORD + "\";");
        return s;
    }

    /** The client side of a listener with this protocol: nothing for PLAINTEXT. */
    Map<String, String> clientSettings(String protocol) {
        Map<String, String> s = new LinkedHashMap<>();
        if (protocol.equals(PLAINTEXT)) {
            return s;
        }
        s.put("security.protocol", protocol);
        s.put("ssl.truststore.location", trustStore.toAbsolutePath().toString());
        s.put("ssl.truststore.password", STORE_PASSWORD);
        s.put("ssl.truststore.type", "PKCS12");
        if (protocol.equals(SASL_SSL)) {
            s.put("sasl.mechanism", MECHANISM);
            s.put("sasl.jaas.config", PLAIN_MODULE + " required username=\"" + USER + "\" password=\""
                    + USER_PASSWORD + "\";");
        }
        return s;
    }
}
