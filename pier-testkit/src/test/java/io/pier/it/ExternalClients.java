package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Finds and runs the non-Java Kafka clients (Python, Node, kcat) the integration tests drive
 * with the small scripts in {@code src/test/clients}. A client that is not installed skips its
 * test with a message saying what to install ({@code .ci/run} installs them all), unless
 * {@code PIER_CLIENTS_REQUIRED=1} is set, as {@code .ci/run} does, where a missing client fails.
 */
final class ExternalClients {
    /** Debian's packages install for the system interpreter, not for a pyenv one earlier on PATH. */
    static final Path SYSTEM_PYTHON = Path.of("/usr/bin/python3");
    static final Path SCRIPTS = Path.of("src/test/clients").toAbsolutePath();
    private static final Path LOGS = Path.of("target/clients").toAbsolutePath();
    private static final Path KAFKAJS_HOME = Path.of(System.getProperty("user.home"), ".cache", "pier-clients",
            "node", "node_modules");
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(20);

    private ExternalClients() {}

    /** Skips (or, when clients are required, fails) with {@code message} unless {@code present}. */
    static void require(boolean present, String message) {
        if (present) {
            return;
        }
        if ("1".equals(System.getenv("PIER_CLIENTS_REQUIRED"))) {
            throw new AssertionError(message + " (PIER_CLIENTS_REQUIRED=1)");
        }
        Assumptions.abort(message);
    }

    static void requirePythonModule(String module, String debianPackage) {
        require(Files.isExecutable(SYSTEM_PYTHON), SYSTEM_PYTHON + " is missing: apt-get install python3 "
                + debianPackage);
        require(succeeds(List.of(SYSTEM_PYTHON.toString(), "-c", "import " + module), Map.of()),
                "Python module " + module + " is missing for " + SYSTEM_PYTHON + ": apt-get install " + debianPackage);
    }

    /** The NODE_PATH under which kafkajs and its codec plugins are installed; skips if there is none. */
    static String requireKafkajs() {
        require(succeeds(List.of("node", "--version"), Map.of()), "node is missing: apt-get install nodejs npm");
        String nodePath = System.getenv().getOrDefault("PIER_KAFKAJS_NODE_PATH", KAFKAJS_HOME.toString());
        require(Files.isRegularFile(Path.of(nodePath, "kafkajs", "package.json")),
                "kafkajs is missing under " + nodePath + ": npm install --prefix " + Path.of(nodePath).getParent()
                        + " kafkajs@2.2.4 kafkajs-snappy@1.1.0 lz4js@0.2.0 (or run .ci/run)");
        return nodePath;
    }

    static void requireKcat() {
        require(succeeds(List.of("kcat", "-V"), Map.of()), "kcat is missing: apt-get install kcat");
    }

    /** True if a Node module resolves under {@code nodePath}. */
    static boolean nodeModulePresent(String nodePath, String module) {
        return Files.isDirectory(Path.of(nodePath, module));
    }

    private static boolean succeeds(List<String> command, Map<String, String> env) {
        try {
            return run("probe", command, env, null, PROBE_TIMEOUT).exitCode() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    record Result(int exitCode, List<String> stdout, Path log) {}

    /**
     * Runs {@code command} in {@link #SCRIPTS} with {@code stdin} (or none), bounded by
     * {@code timeout}; stdout and stderr are kept in target/clients/{@code name}.log.
     */
    static Result run(String name, List<String> command, Map<String, String> env, String stdin, Duration timeout)
            throws IOException {
        Files.createDirectories(LOGS);
        Path out = LOGS.resolve(name + ".out");
        Path log = LOGS.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(SCRIPTS.toFile())
                .redirectOutput(out.toFile()).redirectError(log.toFile());
        pb.environment().putAll(env);
        Process process = pb.start();
        try {
            if (stdin != null) {
                process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            process.getOutputStream().close();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout
                        + "; see " + log);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        return new Result(process.exitValue(), Files.readAllLines(out), log);
    }

    /** Runs a script that must exit 0, and returns its stdout lines. */
    static List<String> runScript(String name, List<String> command, Map<String, String> env, Duration timeout)
            throws IOException {
        Result r = run(name, command, env, null, timeout);
        assertThat(r.exitCode()).as("%s exit code; stdout %s; stderr:%n%s", name, r.stdout(),
                Files.readString(r.log())).isZero();
        return new ArrayList<>(r.stdout());
    }
}
