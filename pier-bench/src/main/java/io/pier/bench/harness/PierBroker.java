package io.pier.bench.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Pier started from its CLI entry point, with one durability mode, the way {@code ./pier start}
 * starts it: with the class-data archive that the launcher records once per build ({@code pier
 * cds-training} under {@code -XX:ArchiveClassesAtExit}). The harness records its own archive, for its
 * own JVM binary and class path, before the first Pier broker's clock starts.
 */
final class PierBroker extends BrokerProcess {
    private static final long TRAINING_TIMEOUT_SECONDS = 180;
    /**
     * The class-data archives this harness run has recorded, one per build (the current one and a
     * baseline): an archive left by an earlier run may fit an older build.
     */
    private static final Set<Path> TRAINED = new HashSet<>();

    private final String classpath;
    private final String durability;
    private final Path archive;
    private final int metricsPort;

    PierBroker(String name, List<String> jvmFlags, Path workDir, String classpath, String durability)
            throws IOException {
        this(name, jvmFlags, workDir, classpath, durability, "pier-cds.jsa");
    }

    /** {@code archiveName}: the class-data archive of this build, beside the brokers' folders. */
    PierBroker(String name, List<String> jvmFlags, Path workDir, String classpath, String durability,
            String archiveName) throws IOException {
        super(name, jvmFlags, workDir);
        this.classpath = classpath;
        this.durability = durability;
        this.archive = workDir.getParent().resolve(archiveName);
        this.metricsPort = freePort();
    }

    @Override
    void prepare() throws Exception {
        ensureArchive(archive, classpath);
    }

    /**
     * Records the class-data archive of the build on {@code classpath} at {@code archive}, unless
     * this harness run already did (a gateway node starts from the same archive as a broker: the
     * launcher records one per build, whichever command then runs).
     */
    static synchronized void ensureArchive(Path archive, String classpath) throws Exception {
        if (TRAINED.contains(archive) && Files.exists(archive)) {
            return;
        }
        Files.deleteIfExists(archive);
        Files.createDirectories(archive.getParent());
        Path log = archive.resolveSibling(archive.getFileName().toString().replace(".jsa", "-training.out"));
        Process training = new ProcessBuilder(javaExecutable(), "-XX:ArchiveClassesAtExit=" + archive,
                "-cp", classpath, "io.pier.cli.Main", "cds-training")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!training.waitFor(TRAINING_TIMEOUT_SECONDS, TimeUnit.SECONDS) || training.exitValue() != 0) {
            training.destroyForcibly();
            Files.deleteIfExists(archive);
            throw new IOException("pier cds-training failed; see " + log);
        }
        TRAINED.add(archive);
    }

    @Override
    List<String> command() {
        // Unlike the launcher, warnings stay on: an archive the JVM refused shows in the broker's .out file.
        List<String> cmd = new ArrayList<>(List.of("-XX:SharedArchiveFile=" + archive));
        cmd.addAll(List.of("-cp", classpath, "io.pier.cli.Main", "start",
                "--port", Integer.toString(port),
                "--data-dir", workDir.resolve("data").toString(),
                "--set", "pier.log.durability=" + durability,
                // Metrics stay on, as by default, on a port of their own so two harness runs never collide.
                "--set", "pier.metrics.port=" + metricsPort));
        // PIER_BENCH_PIER_SET: broker settings for the Pier brokers only, "k=v k=v" (an experiment
        // such as pier.agent.spin.us=50 against the defaults, with Kafka unchanged beside it).
        for (String setting : System.getenv().getOrDefault("PIER_BENCH_PIER_SET", "").trim().split("\\s+")) {
            if (!setting.isEmpty()) {
                cmd.addAll(List.of("--set", setting));
            }
        }
        if (security != null) {
            // --port above sets the first listener's port, PLAINTEXT's; the settings are Kafka's names.
            cmd.addAll(List.of("--set", "listeners=PLAINTEXT://127.0.0.1:" + port + securityListeners(),
                    "--set", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL"));
            security.serverSettings().forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        }
        return cmd;
    }
}
