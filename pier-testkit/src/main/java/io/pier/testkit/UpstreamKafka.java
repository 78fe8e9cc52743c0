package io.pier.testkit;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Apache Kafka broker (the release this build's kafka-clients come from, or an older one) for tests of
 * gateway mode, where Pier forwards to an existing Kafka-API cluster, the upstream. It runs as a
 * single-node KRaft cluster (one process that is broker and controller) in a child JVM on this
 * test's class path (which must hold the Kafka broker, {@code org.apache.kafka:kafka_2.13}, as
 * pier-testkit's own tests do in test scope), on 127.0.0.1, with its data in a temporary folder that {@link #close()}
 * deletes. A child JVM rather than the broker classes in the test JVM: the broker then has its own
 * heap, threads and logging, and a test can kill it like a real upstream.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();   // one per test class
 * ... props.put("bootstrap.servers", UPSTREAM.bootstrapServers());
 *
 * try (UpstreamKafka upstream = UpstreamKafka.builder().shareGroups(true).start()) { ... }
 *
 * static final UpstreamKafka KAFKA_39 = UpstreamKafka.builder().version("3.9.1").build();
 * }</pre>
 *
 * <p>Share groups are off unless asked for: the storage is formatted with {@code share.version=0}
 * (Kafka 4.4 has no broker setting for it; the feature level alone decides), so a share consumer
 * pointed at the upstream fails, and anything that works must have come from Pier.
 *
 * <p>Another release ({@link Builder#version}): the broker then runs from that release's own jars,
 * the folder {@code <version>/} under the system property {@value #RELEASES_DIR_PROPERTY} (default
 * {@code target/upstream-kafka}), which pier-testkit's build fills in its pre-integration-test
 * phase (Kafka 3.9.1: its broker, every runtime dependency its pom names, and slf4j-simple 1.7).
 * Kafka 3.9 has no share groups at all (no {@code share.version} feature,
 * no share-group APIs advertised), so {@code shareGroups(true)} is refused for them; their single
 * node is formatted the same way ({@code --standalone}, KIP-853, first in 3.9), without the
 * share-coordinator settings. Their consumer groups are the release's defaults: classic only in
 * 3.9, as {@code group.coordinator.rebalance.protocols} says there.
 *
 * <p>A secured upstream ({@link Builder#sasl}, {@link Builder#tls}): the listener clients use,
 * {@code CLIENT}, authenticates with SASL (PLAIN, or SCRAM whose credentials the storage format
 * adds, KIP-900), over TLS too if asked, while the broker's own connections to itself (transaction
 * markers) go over a plaintext {@code BROKER} listener on a port of its own, which tests are not told. Two
 * users: {@value #ADMIN_USER}, whom {@link #clientConfig()} logs in as, and {@value #CLIENT_USER};
 * {@link #clientSecurity} makes the settings of either, or of a wrong password. No authorizer:
 * any user may do anything.
 *
 * <pre>{@code
 * static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().sasl("PLAIN").build();
 * Admin.create(UPSTREAM.clientConfig());   // security.protocol=SASL_PLAINTEXT, sasl.* as admin
 * }</pre>
 *
 * <p>Start-up: free ports are found by binding port 0 and closing it (a Kafka listener needs a
 * fixed port), the storage is formatted ({@code kafka.tools.StorageTool format --standalone}),
 * {@code kafka.Kafka} starts, and the broker is ready once the Admin client describes a cluster of
 * one node. Its output (stdout and stderr) goes to a file in the temporary folder; every failure
 * message carries the file's tail.
 */
public final class UpstreamKafka implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    /** The system property naming the folder that holds one folder of jars per release ({@link Builder#version}). */
    public static final String RELEASES_DIR_PROPERTY = "pier.upstreamKafka.dir";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration POLL_INTERVAL = Duration.ofMillis(50);
    /** Start attempts when another process takes a probed port before the broker binds it. */
    private static final int START_ATTEMPTS = 3;
    private static final int TAIL_BYTES = 8 * 1024;
    /** The user {@link #clientConfig()} logs in as on a secured upstream. */
    public static final String ADMIN_USER = "admin";
    public static final String ADMIN_PASSWORD = "admin-secret";
    /** A second user of a secured upstream, for a client other than the tests' own (a gateway). */
    public static final String CLIENT_USER = "client";
    public static final String CLIENT_PASSWORD = "client-secret";
    private static final List<String> SASL_MECHANISMS = List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

    private final boolean shareGroups;
    /** The release to run, or null for the broker on the test class path. */
    private final String version;
    private final Map<String, String> configs;
    /** The client listener's SASL mechanism, or null for none. */
    private final String saslMechanism;
    /** The client listener's certificates, or null for no TLS. */
    private final TestCertificates certificates;
    private final int proxiedListeners;
    /** Per proxied listener: {the port it listens on, the port it advertises}. */
    private int[][] proxied = new int[0][];
    private Path home;
    private Path output;
    private int port;
    private Process process;
    private Thread killOnExit;

    private UpstreamKafka(Builder builder) {
        this.shareGroups = builder.shareGroups;
        this.version = builder.version;
        this.configs = Map.copyOf(builder.configs);
        this.saslMechanism = builder.saslMechanism;
        this.certificates = builder.certificates;
        this.proxiedListeners = builder.proxiedListeners;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options of an upstream; {@link #build()} makes one to register as an extension. */
    public static final class Builder {
        private boolean shareGroups;
        private String version;
        private final Map<String, String> configs = new LinkedHashMap<>();
        private String saslMechanism;
        private TestCertificates certificates;
        private int proxiedListeners;

        private Builder() {}

        /** Whether the upstream serves share groups itself: {@code share.version} 0 (the default) or the release's default. */
        public Builder shareGroups(boolean enabled) {
            this.shareGroups = enabled;
            return this;
        }

        /**
         * Runs this Apache Kafka release (3.9 or later, for example {@code "3.9.1"}) from its own
         * jars (see the class comment) instead of the broker on the test class path.
         */
        public Builder version(String release) {
            int[] majorMinor = majorMinor(release);
            if (majorMinor[0] < 3 || (majorMinor[0] == 3 && majorMinor[1] < 9)) {
                throw new IllegalArgumentException("Kafka " + release
                        + ": a single KRaft node is formatted with --standalone, which needs Kafka 3.9 or later");
            }
            this.version = release;
            return this;
        }

        /** A broker setting on top of (or instead of) the single-node defaults. */
        public Builder config(String key, String value) {
            configs.put(key, value);
            return this;
        }

        /**
         * Clients must log in with SASL {@code mechanism} ({@code PLAIN}, {@code SCRAM-SHA-256} or
         * {@code SCRAM-SHA-512}) as {@value #ADMIN_USER} or {@value #CLIENT_USER}: the client
         * listener is SASL_PLAINTEXT (SASL_SSL with {@link #tls}).
         */
        public Builder sasl(String mechanism) {
            if (!SASL_MECHANISMS.contains(mechanism)) {
                throw new IllegalArgumentException("SASL mechanism " + mechanism + ": one of " + SASL_MECHANISMS);
            }
            this.saslMechanism = mechanism;
            return this;
        }

        /**
         * The client listener speaks TLS with {@code certs}' server certificate (SSL, or SASL_SSL
         * with {@link #sasl}); clients trust its authority. No client certificate is asked for.
         */
        public Builder tls(TestCertificates certs) {
            this.certificates = Objects.requireNonNull(certs, "certs");
            return this;
        }

        /**
         * {@code count} more plaintext listeners, one per client whose link to the broker a test
         * wants to cut on its own (a gateway node's): each listens on a port of its own and
         * advertises another, {@link #proxiedListener}'s {@code advertisedPort}, where the test
         * puts a proxy that forwards to its {@code port}. A client bootstrapped on the advertised
         * port learns only that address from the broker, so all its connections go through the
         * proxy. Plaintext upstreams only.
         */
        public Builder proxiedListeners(int count) {
            if (count < 0) {
                throw new IllegalArgumentException("proxied listeners: " + count);
            }
            this.proxiedListeners = count;
            return this;
        }

        /** An upstream not started yet: for {@code @RegisterExtension}, which starts it before all tests. */
        public UpstreamKafka build() {
            if (proxiedListeners > 0 && (saslMechanism != null || certificates != null)) {
                throw new IllegalArgumentException("proxied listeners are plaintext: not with SASL or TLS");
            }
            if (shareGroups && version != null && majorMinor(version)[0] < 4) {
                throw new IllegalArgumentException("Kafka " + version + " has no share groups");
            }
            return new UpstreamKafka(this);
        }

        /** Builds and starts an upstream; close it when done. */
        public UpstreamKafka start() throws IOException, InterruptedException {
            return build().start();
        }
    }

    /** {major, minor} of a release such as "3.9.1". */
    private static int[] majorMinor(String release) {
        String[] parts = release.split("\\.");
        try {
            return new int[] {Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : 0};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a Kafka release: " + release, e);
        }
    }

    /** Whether the broker is a release before 4.0 (one without share groups). */
    private boolean before4() {
        return version != null && majorMinor(version)[0] < 4;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        close();
    }

    /**
     * Formats a fresh storage folder and starts the broker, returning once it serves requests.
     *
     * @throws AssertionError with the broker's output if it exits or is not ready in 60 s
     */
    public UpstreamKafka start() throws IOException, InterruptedException {
        if (process != null) {
            throw new IllegalStateException("already started");
        }
        String classPath = classPath(); // before anything to clean up: fails if the release's jars are missing
        home = Files.createTempDirectory("upstream-kafka-");
        killOnExit = new Thread(this::killNow, "upstream-kafka-kill-on-exit");
        Runtime.getRuntime().addShutdownHook(killOnExit);
        try {
            for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
                Path data = home.resolve("data-" + attempt);
                output = home.resolve("kafka-" + attempt + ".out");
                int fixed = secured() ? 3 : 2;
                int[] ports = freePorts(fixed + 2 * proxiedListeners);
                port = ports[0];
                int controllerPort = ports[1];
                int brokerPort = secured() ? ports[2] : -1;
                proxied = new int[proxiedListeners][];
                for (int i = 0; i < proxiedListeners; i++) {
                    proxied[i] = new int[] {ports[fixed + 2 * i], ports[fixed + 2 * i + 1]};
                }
                Path props = home.resolve("server-" + attempt + ".properties");
                Files.writeString(props, serverProperties(data, controllerPort, brokerPort), StandardCharsets.UTF_8);
                format(classPath, props);
                process = javaCommand(classPath, "kafka.Kafka", props.toString()).redirectOutput(output.toFile()).start();
                if (awaitReady()) {
                    return this;
                }
            }
            throw notReady("another process took one of its probed ports on each of " + START_ATTEMPTS + " attempts");
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            // A caller whose start failed has nothing to close: leave no process or folder behind.
            try {
                close();
            } catch (IOException | InterruptedException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** "127.0.0.1:port" of the broker's client listener. */
    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** A proxied listener's two ports ({@link Builder#proxiedListeners}): where it listens, and where its proxy goes. */
    public record ProxiedListener(int port, int advertisedPort) {
        /** "127.0.0.1:advertisedPort": the bootstrap of a client whose every connection goes through the proxy. */
        public String bootstrapServers() {
            return "127.0.0.1:" + advertisedPort;
        }
    }

    /** Proxied listener {@code index} (0-based) of a started upstream. */
    public ProxiedListener proxiedListener(int index) {
        if (index < 0 || index >= proxied.length) {
            throw new IllegalArgumentException("proxied listener " + index + " of " + proxied.length
                    + " (started: " + (process != null) + ")");
        }
        return new ProxiedListener(proxied[index][0], proxied[index][1]);
    }

    /** A client config that reaches this upstream (as {@value #ADMIN_USER} if secured), to add to. */
    public Map<String, Object> clientConfig() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("bootstrap.servers", bootstrapServers());
        config.putAll(clientSecurity(ADMIN_USER, ADMIN_PASSWORD));
        return config;
    }

    /** The client listener's security protocol: PLAINTEXT unless {@link Builder#sasl} or {@link Builder#tls}. */
    public String securityProtocol() {
        if (saslMechanism == null) {
            return certificates == null ? "PLAINTEXT" : "SSL";
        }
        return certificates == null ? "SASL_PLAINTEXT" : "SASL_SSL";
    }

    /**
     * The client settings that log in to this upstream as {@code user} with {@code password}
     * (Kafka's names: {@code security.protocol}, {@code sasl.*}, {@code ssl.truststore.*}), without
     * {@code bootstrap.servers}; empty for a plaintext upstream, and without SASL settings for a
     * TLS-only one.
     */
    public Map<String, Object> clientSecurity(String user, String password) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (certificates != null) {
            out.putAll(certificates.clientSettings(false));
        }
        if (saslMechanism != null || certificates != null) {
            out.put("security.protocol", securityProtocol());
        }
        if (saslMechanism != null) {
            out.put("sasl.mechanism", saslMechanism);
            out.put("sasl.jaas.config", loginModule() + " required username=\"" + user + "\" password=\"" + password
                    + "\";");
        }
        return out;
    }

    private String loginModule() {
        return saslMechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
    }

    /** The end of the broker's output, for failure messages. */
    public String outputTail() {
        if (output == null || !Files.exists(output)) {
            return "(no output)";
        }
        try (RandomAccessFile f = new RandomAccessFile(output.toFile(), "r")) {
            long from = Math.max(0, f.length() - TAIL_BYTES);
            byte[] tail = new byte[(int) (f.length() - from)];
            f.seek(from);
            f.readFully(tail);
            return new String(tail, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(output unreadable: " + e + ")";
        }
    }

    /** SIGKILL: the broker stops at once, with nothing flushed; {@link #close()} still cleans up. */
    public void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            if (!process.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the upstream broker had not exited " + KILL_TIMEOUT + " after SIGKILL");
            }
        }
    }

    /** Whether the broker process is running. */
    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /**
     * Stops the broker (SIGTERM: a controlled shutdown; SIGKILL if it has not exited after 30 s)
     * and deletes its folder. Idempotent.
     */
    @Override
    public void close() throws IOException, InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
            }
        }
        if (killOnExit != null) {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
            killOnExit = null;
        }
        if (home != null) {
            deleteTree(home);
            home = null;
        }
    }

    /** The shutdown hook's job: a test JVM that exits without {@link #close()} leaves no broker behind. */
    private void killNow() {
        if (process != null) {
            process.destroyForcibly();
        }
    }

    private String serverProperties(Path data, int controllerPort, int brokerPort) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        if (secured()) {
            securedListeners(p, controllerPort, brokerPort);
        } else {
            StringBuilder listeners = new StringBuilder("PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:"
                    + controllerPort);
            StringBuilder advertised = new StringBuilder(listeners);
            StringBuilder protocols = new StringBuilder("CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
            for (int i = 0; i < proxied.length; i++) {
                String name = "PROXIED" + i;
                listeners.append(',').append(name).append("://127.0.0.1:").append(proxied[i][0]);
                advertised.append(',').append(name).append("://127.0.0.1:").append(proxied[i][1]);
                protocols.append(',').append(name).append(":PLAINTEXT");
            }
            p.put("listeners", listeners.toString());
            p.put("advertised.listeners", advertised.toString());
            p.put("inter.broker.listener.name", "PLAINTEXT");
            p.put("controller.listener.names", "CONTROLLER");
            p.put("listener.security.protocol.map", protocols.toString());
        }
        p.put("log.dirs", data.toString());
        p.put("num.partitions", "1");
        // One node: the internal topics cannot have more replicas than that.
        p.put("offsets.topic.replication.factor", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        if (!before4()) {
            p.put("share.coordinator.state.topic.replication.factor", "1");
            p.put("share.coordinator.state.topic.min.isr", "1");
        }
        // A consumer group's first member need not wait 3 s for others.
        p.put("group.initial.rebalance.delay.ms", "0");
        // Two cores are shared by the test JVM and this one.
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "2");
        p.putAll(configs);
        StringBuilder out = new StringBuilder();
        p.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString();
    }

    private boolean secured() {
        return saslMechanism != null || certificates != null;
    }

    /**
     * The listeners of a secured upstream: clients on CLIENT (SASL and/or TLS); the broker's
     * connections to itself on BROKER, plaintext, so they need no credentials of their own.
     */
    private void securedListeners(Map<String, String> p, int controllerPort, int brokerPort) {
        String listeners = "CLIENT://127.0.0.1:" + port + ",BROKER://127.0.0.1:" + brokerPort
                + ",CONTROLLER://127.0.0.1:" + controllerPort;
        p.put("listeners", listeners);
        p.put("advertised.listeners", listeners);
        p.put("inter.broker.listener.name", "BROKER");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,CLIENT:" + securityProtocol());
        if (saslMechanism != null) {
            p.put("sasl.enabled.mechanisms", saslMechanism);
            // A SASL listener's JAAS config goes under listener.name.<listener, lower case>.<mechanism,
            // lower case>. PLAIN's user_<name> options are its users; SCRAM's users are the
            // credentials the storage format added, so its login module needs no options.
            String jaas = saslMechanism.equals("PLAIN")
                    ? loginModule() + " required user_" + ADMIN_USER + "=\"" + ADMIN_PASSWORD + "\" user_" + CLIENT_USER
                            + "=\"" + CLIENT_PASSWORD + "\";"
                    : loginModule() + " required;";
            p.put("listener.name.client." + saslMechanism.toLowerCase(Locale.ROOT) + ".sasl.jaas.config", jaas);
        }
        if (certificates != null) {
            // Only CLIENT speaks TLS, so the key store is that listener's alone.
            certificates.serverSettings().forEach((k, v) -> p.put("listener.name.client." + k, v));
        }
    }

    private void format(String classPath, Path props) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("format", "--standalone", "-t", Uuid.randomUuid().toString(),
                "-c", props.toString()));
        if (!shareGroups && !before4()) {
            // (3.x has no share.version feature: its StorageTool would refuse the name.)
            args.addAll(List.of("--feature", "share.version=0"));
        }
        if (saslMechanism != null && saslMechanism.startsWith("SCRAM-")) {
            // KRaft keeps SCRAM credentials in the metadata log: the format writes the first ones.
            for (String[] user : new String[][] {{ADMIN_USER, ADMIN_PASSWORD}, {CLIENT_USER, CLIENT_PASSWORD}}) {
                args.addAll(List.of("--add-scram", saslMechanism + "=[name=" + user[0] + ",password=" + user[1] + "]"));
            }
        }
        Path formatOutput = home.resolve("format.out");
        Process format = javaCommand(classPath, "kafka.tools.StorageTool", args.toArray(String[]::new))
                .redirectOutput(formatOutput.toFile()).start();
        if (!format.waitFor(FORMAT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            format.destroyForcibly();
            throw new AssertionError("formatting the upstream storage took over " + FORMAT_TIMEOUT);
        }
        if (format.exitValue() != 0) {
            throw new AssertionError("formatting the upstream storage failed with " + format.exitValue() + ":\n"
                    + Files.readString(formatOutput, StandardCharsets.UTF_8));
        }
    }

    /**
     * The broker's class path: this test's, or the release's folder of jars (a class-path wildcard).
     *
     * @throws IllegalStateException if the release's folder lacks its broker jar
     */
    private String classPath() {
        if (version == null) {
            return System.getProperty("java.class.path");
        }
        Path jars = Path.of(System.getProperty(RELEASES_DIR_PROPERTY, "target/upstream-kafka"), version).toAbsolutePath();
        Path broker = jars.resolve("kafka_2.13-" + version + ".jar");
        if (!Files.isRegularFile(broker)) {
            throw new IllegalStateException("no Apache Kafka " + version + " broker at " + broker
                    + ": pier-testkit's build copies it there in its pre-integration-test phase"
                    + " (./mvnw verify -pl pier-testkit; its version is the property upstream.kafka.older.version)");
        }
        return jars + File.separator + "*";
    }

    private static ProcessBuilder javaCommand(String classPath, String mainClass, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.awt.headless=true",
                // The broker logs through slf4j-simple (this class path's, or the 1.7 one beside an
                // older release's jars): keep its info lines, not the hundreds of config lines
                // every client and server prints on start.
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config=warn",
                "-cp", classPath, mainClass));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true);
    }

    /**
     * Waits until the broker serves an Admin request. Returns false (the process gone, ready for
     * another attempt) if it exited because a probed port was taken in the meantime.
     */
    private boolean awaitReady() throws InterruptedException, IOException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        // Wait for the port first, so the Admin client does not log a failed connection per retry.
        while (!accepting()) {
            if (!process.isAlive()) {
                return portTaken();
            }
            if (System.nanoTime() > deadline) {
                throw notReady("its port did not open");
            }
            Thread.sleep(POLL_INTERVAL.toMillis());
        }
        Map<String, Object> config = clientConfig();
        config.put("request.timeout.ms", 5_000);
        config.put("default.api.timeout.ms", 5_000);
        try (Admin admin = Admin.create(config)) {
            while (true) {
                if (!process.isAlive()) {
                    return portTaken();
                }
                try {
                    if (admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == 1) {
                        return true;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    if (System.nanoTime() > deadline) {
                        throw notReady("describeCluster failed: " + e);
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw notReady("it described no node");
                }
                Thread.sleep(POLL_INTERVAL.toMillis());
            }
        }
    }

    private boolean accepting() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The broker exited while starting: true if because a port was taken, else fails with its output. */
    private boolean portTaken() {
        if (outputTail().contains("Address already in use")) {
            return false;
        }
        throw notReady("it exited with " + process.exitValue());
    }

    private AssertionError notReady(String why) {
        killNow();
        return new AssertionError("the upstream Kafka broker did not become ready: " + why
                + "\n--- its output, last lines:\n" + outputTail());
    }

    /**
     * {@code count} distinct free loopback ports, probed side by side: probed one after another,
     * two could be the same port (a freed port handed out again), which Kafka refuses for two
     * listeners ("If you have two listeners on the same port...").
     */
    private static int[] freePorts(int count) throws IOException {
        List<ServerSocket> open = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                open.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : open) {
                s.close();
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(f);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
