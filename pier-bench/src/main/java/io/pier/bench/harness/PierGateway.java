package io.pier.bench.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One Pier gateway node (issue 16) in front of an upstream Kafka cluster, started the way
 * {@code ./pier gateway --upstream-bootstrap HOST:PORT --node-id N --port P} starts it, from the
 * class-data archive of its build ({@link PierBroker#ensureArchive}). Its data folder holds only
 * the mirrors, which are caches; a node restarted after a kill starts from an empty one.
 */
final class PierGateway extends BrokerProcess {
    final int nodeId;
    private final String classpath;
    private final Path archive;
    private final String upstream;
    private final Map<String, String> settings;
    private final int metricsPort;

    /**
     * @param port the node's listener port (the same one again when a killed node is restarted,
     *     as a supervisor would, so clients that bootstrapped on it find it there)
     * @param settings {@code --set} settings, e.g. {@code pier.gateway.session.timeout.ms}
     */
    PierGateway(String name, List<String> jvmFlags, Path workDir, String classpath, Path archive, int nodeId,
            String upstream, Map<String, String> settings, int port) throws IOException {
        super(name, jvmFlags, workDir, port);
        this.classpath = classpath;
        this.archive = archive;
        this.nodeId = nodeId;
        this.upstream = upstream;
        this.settings = Map.copyOf(settings);
        this.metricsPort = freePort();
    }

    @Override
    void prepare() throws Exception {
        PierBroker.ensureArchive(archive, classpath);
    }

    @Override
    List<String> command() {
        // Timestamps on the log lines: a failover is read off several nodes' logs side by side.
        List<String> cmd = new ArrayList<>(List.of("-XX:SharedArchiveFile=" + archive,
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-cp", classpath, "io.pier.cli.Main", "gateway",
                "--upstream-bootstrap", upstream,
                "--node-id", Integer.toString(nodeId),
                "--port", Integer.toString(port),
                "--data-dir", workDir.resolve("data").toString(),
                "--set", "pier.metrics.port=" + metricsPort));
        settings.forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        // The same experiment hook as the brokers': settings for the Pier JVMs only.
        for (String setting : System.getenv().getOrDefault("PIER_BENCH_PIER_SET", "").trim().split("\\s+")) {
            if (!setting.isEmpty()) {
                cmd.addAll(List.of("--set", setting));
            }
        }
        return cmd;
    }

    /**
     * The node's Prometheus page ({@code pier.metrics.port}), or empty if it does not answer: the
     * request-duration sums and counts it holds say where a gateway row's time went.
     */
    String metrics() {
        try {
            java.net.HttpURLConnection c = (java.net.HttpURLConnection)
                    java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics").toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(5000);
            try (java.io.InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            } finally {
                c.disconnect();
            }
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** kill -9: no leave from the gateway group, no flush; the others notice it by its session timing out. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }
}
