package io.pier.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway certificate authority with a server certificate (for 127.0.0.1 and localhost) and a
 * client certificate, made with the JDK's {@code keytool} in a folder of the caller's choosing.
 * Every store is PKCS12 with the one password {@link #password()}. For tests only: the keys are
 * short-lived and the password is public.
 *
 * <p>keytool is a JVM of its own, started 13 times for an authority and its two certificates and 5
 * times for each further client certificate, seconds of CPU on a loaded machine. So the stores are
 * made once per JVM and copied into each caller's folder: the test classes of one run share one
 * authority, as they would share a company's, and a client certificate asked for again with the
 * same name and subject is the same certificate.
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
    private static final Object LOCK = new Object();
    /** The stores made in this JVM, copied into each caller's folder; null until the first create. */
    private static Path made;
    /** Subject of each client certificate in {@link #made}, by name. */
    private static final Map<String, String> madeClients = new HashMap<>();

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

    /** Puts the authority, both certificates and the stores in {@code dir}. */
    public static TestCertificates create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        synchronized (LOCK) {
            if (made == null) {
                Path folder = Files.createTempDirectory("pier-test-certs-");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(folder)));
                make(folder);
                made = folder;
                // names of the stores make() wrote: another subject under one of them is made apart
                madeClients.putAll(Map.of("server", "CN=localhost", "client", "CN=pier-test-client,O=Pier",
                        "ca", "", "truststore", ""));
            }
            for (String file : List.of("ca.p12", "ca.crt", "truststore.p12", "server.p12", "client.p12")) {
                Files.copy(made.resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return new TestCertificates(dir, dir.resolve("server.p12"), dir.resolve("client.p12"),
                dir.resolve("truststore.p12"));
    }

    private static void deleteTree(Path folder) {
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a temporary folder left behind
        }
    }

    private static void make(Path dir) throws IOException, InterruptedException {
        Path ca = dir.resolve("ca.p12");
        Path caCert = dir.resolve("ca.crt");
        keytool("-genkeypair", "-alias", "ca", "-dname", "CN=Pier Test CA", "-ext", "bc:c",
                "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2", "-keystore", ca.toString());
        keytool("-exportcert", "-alias", "ca", "-rfc", "-file", caCert.toString(), "-keystore", ca.toString());
        Path trust = dir.resolve("truststore.p12");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert.toString(), "-keystore", trust.toString());
        signed(dir, ca, caCert, "server", "CN=localhost", "san=ip:127.0.0.1,dns:localhost");
        signed(dir, ca, caCert, "client", "CN=pier-test-client,O=Pier", null);
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
        Path store = dir.resolve(name + ".p12");
        synchronized (LOCK) {
            String subject = madeClients.get(name);
            if (subject != null && !subject.equals(dname)) {
                // the name is taken by another subject: made here, from this folder's copy of the authority
                return signed(dir, dir.resolve("ca.p12"), dir.resolve("ca.crt"), name, dname, null);
            }
            if (subject == null) {
                signed(made, made.resolve("ca.p12"), made.resolve("ca.crt"), name, dname, null);
                madeClients.put(name, dname);
            }
            Files.copy(made.resolve(name + ".p12"), store, StandardCopyOption.REPLACE_EXISTING);
        }
        return store;
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
