package io.pier.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority with a server certificate (for 127.0.0.1 and localhost) and a
 * client certificate, made with the JDK's {@code keytool} in a folder of the caller's choosing.
 * Every store is PKCS12 with the one password {@link #password()}. For tests only: the keys are
 * short-lived and the password is public.
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.create(dir);
 * broker.configs(certs.serverSettings());        // ssl.keystore.*, ssl.truststore.*
 * clientProps.putAll(certs.clientSettings(true)); // security.protocol=SSL, with a client certificate
 * }</pre>
 */
public final class TestCertificates {
    private static final String PASSWORD = "pier-test-secret";
    private static final long KEYTOOL_TIMEOUT_SECONDS = 60;

    private final Path serverKeyStore;
    private final Path clientKeyStore;
    private final Path trustStore;
    private final Path dir;

    private TestCertificates(Path dir, Path serverKeyStore, Path clientKeyStore, Path trustStore) {
        this.dir = dir;
        this.serverKeyStore = serverKeyStore;
        this.clientKeyStore = clientKeyStore;
        this.trustStore = trustStore;
    }

    /** Makes the authority, both certificates and the stores in {@code dir}. */
    public static TestCertificates create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path ca = dir.resolve("ca.p12");
        Path caCert = dir.resolve("ca.crt");
        keytool("-genkeypair", "-alias", "ca", "-dname", "CN=Pier Test CA", "-ext", "bc:c",
                "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2", "-keystore", ca.toString());
        keytool("-exportcert", "-alias", "ca", "-rfc", "-file", caCert.toString(), "-keystore", ca.toString());
        Path trust = dir.resolve("truststore.p12");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore", trust.toString());
        Path server = signed(dir, ca, caCert, "server", "CN=localhost", "san=ip:127.0.0.1,dns:localhost");
        Path client = signed(dir, ca, caCert, "client", "CN=pier-test-client,O=Pier", null);
        return new TestCertificates(dir, server, client, trust);
    }

    private static Path signed(Path dir, Path ca, Path caCert, String name, String dname, String san)
            throws IOException, InterruptedException {
        Path store = dir.resolve(name + ".p12");
        Path csr = dir.resolve(name + ".csr");
        Path cert = dir.resolve(name + ".crt");
        keytool("-genkeypair", "-alias", name, "-dname", dname, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", "2", "-keystore", store.toString());
        keytool("-certreq", "-alias", name, "-file", csr.toString(), "-keystore", store.toString());
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-infile", csr.toString(),
                "-outfile", cert.toString(), "-rfc", "-validity", "2", "-keystore", ca.toString()));
        if (san != null) {
            gencert.addAll(List.of("-ext", san));
        }
        keytool(gencert.toArray(new String[0]));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore", store.toString());
        keytool("-importcert", "-alias", name, "-file", cert.toString(), "-keystore", store.toString());
        return store;
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keypass", PASSWORD));
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("keytool " + args[0] + " did not finish in " + KEYTOOL_TIMEOUT_SECONDS + " s");
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
        }
    }

    /** One more client certificate, signed by the same authority, with subject {@code dname} (e.g. CN=alice). */
    public Path clientKeyStore(String name, String dname) throws IOException, InterruptedException {
        return signed(dir, dir.resolve("ca.p12"), dir.resolve("ca.crt"), name, dname, null);
    }

    /** Client settings for an SSL listener, presenting the certificate in {@code keyStore}. */
    public Map<String, Object> clientSettings(Path keyStore) {
        Map<String, Object> out = clientSettings(false);
        out.put("ssl.keystore.location", keyStore.toString());
        out.put("ssl.keystore.password", PASSWORD);
        out.put("ssl.keystore.type", "PKCS12");
        out.put("ssl.key.password", PASSWORD);
        return out;
    }

    public String password() {
        return PASSWORD;
    }

    public Path serverKeyStore() {
        return serverKeyStore;
    }

    public Path clientKeyStore() {
        return clientKeyStore;
    }

    public Path trustStore() {
        return trustStore;
    }

    /** Broker settings: the server key store, and the authority as trust store (for client certificates). */
    public Map<String, String> serverSettings() {
        Map<String, String> out = new HashMap<>();
        out.put("ssl.keystore.location", serverKeyStore.toString());
        out.put("ssl.keystore.password", PASSWORD);
        out.put("ssl.keystore.type", "PKCS12");
        out.put("ssl.truststore.location", trustStore.toString());
        out.put("ssl.truststore.password", PASSWORD);
        out.put("ssl.truststore.type", "PKCS12");
        return out;
    }

    /** Client settings for an SSL listener, trusting the authority; with the client certificate if asked. */
    public Map<String, Object> clientSettings(boolean withCertificate) {
        Map<String, Object> out = new HashMap<>();
        out.put("security.protocol", "SSL");
        out.put("ssl.truststore.location", trustStore.toString());
        out.put("ssl.truststore.password", PASSWORD);
        out.put("ssl.truststore.type", "PKCS12");
        if (withCertificate) {
            out.put("ssl.keystore.location", clientKeyStore.toString());
            out.put("ssl.keystore.password", PASSWORD);
            out.put("ssl.keystore.type", "PKCS12");
            out.put("ssl.key.password", PASSWORD);
        }
        return out;
    }
}
