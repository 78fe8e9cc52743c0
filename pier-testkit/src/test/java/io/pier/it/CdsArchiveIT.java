package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's class-data archive, as {@code ./pier} records and uses it: {@code pier cds-training}
 * under {@code -XX:ArchiveClassesAtExit} ends cleanly and writes an archive, and a broker started
 * with that archive serves a client with its own classes and its request path mapped from it
 * rather than loaded from the jars.
 */
class CdsArchiveIT {
    private static final long TRAINING_TIMEOUT_SECONDS = 180;

    @TempDir
    Path dir;

    @Test
    void trainingRecordsAnArchiveThatTheBrokerStartsFrom() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath = launcherClasspath();
        Path archive = dir.resolve("pier.jsa");
        Path trainingOut = dir.resolve("training.out");
        Process training = new ProcessBuilder(java, "-XX:ArchiveClassesAtExit=" + archive, "-cp", classpath,
                "io.pier.cli.Main", "cds-training").redirectErrorStream(true).redirectOutput(trainingOut.toFile()).start();
        boolean ended = training.waitFor(TRAINING_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!ended) {
            training.destroyForcibly();
        }
        String trainingLog = Files.readString(trainingOut, StandardCharsets.UTF_8);
        assertThat(ended).as(trainingLog).isTrue();
        assertThat(training.exitValue()).as(trainingLog).isZero();
        assertThat(trainingLog).contains("class-data training run done");
        assertThat(archive).isNotEmptyFile();

        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path classLog = dir.resolve("classes.log");
        Path out = dir.resolve("broker.out");
        List<String> command = new ArrayList<>(List.of(java, "-XX:SharedArchiveFile=" + archive,
                "-Xlog:class+load=info:file=" + classLog, "-cp", classpath, "io.pier.cli.Main", "start",
                "--port", String.valueOf(port), "--data-dir", dir.resolve("data").toString(),
                "--set", "pier.metrics.port=0"));
        Process broker = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            await("broker start").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
                String log = read(out);
                assertThat(broker.isAlive()).as(log).isTrue();
                return log.contains("Pier is ready");
            });
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
                assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
            }
        } finally {
            broker.destroy();
            assertThat(broker.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        // The JVM marks each class mapped from an archive "source: shared objects file"; "(top)" is
        // the dynamic archive on top of the JDK's own.
        String classes = read(classLog);
        assertThat(classes).as("the archive was used").contains("shared objects file (top)");
        for (String name : List.of("io.pier.server.Broker", "io.pier.network.RequestChannelHandler",
                "io.pier.protocol.ApiVersionsHandler", "io.pier.protocol.MetadataHandler",
                "org.apache.kafka.common.message.MetadataResponseData")) {
            assertThat(classes).contains(name + " source: shared objects file (top)");
        }
    }

    /**
     * The class path {@code ./pier} runs with: pier-server's jar and its runtime dependencies, which
     * the reactor packages before these tests run. (CDS archives only jars, never class directories.)
     */
    private static String launcherClasspath() throws IOException {
        Path target = Path.of("..", "pier-server", "target").toAbsolutePath().normalize();
        try (var files = Files.list(target)) {
            Path jar = files.filter(f -> f.getFileName().toString().matches("pier-server-.*\\.jar"))
                    .filter(f -> !f.getFileName().toString().contains("sources"))
                    .findFirst().orElseThrow(() -> new AssertionError("pier-server is not packaged in " + target));
            return jar + File.pathSeparator + target.resolve("lib") + File.separator + "*";
        }
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
