package io.pier.it;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code pier start} in a child JVM on this test's class path, on a fixed loopback port and data
 * folder, so a test can SIGKILL it and start it again on the same data. Each start writes its
 * output to its own file in the log folder; when the broker dies unexpectedly, all of them go into
 * the failure message. A test may also stop the whole broker process with SIGSTOP and let it go on
 * with SIGCONT ({@link #pause()}, {@link #resume()}): nothing in it runs meanwhile, and its sockets
 * stay open.
 */
public final class ChildBroker implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> DEFAULT_JVM_OPTIONS = List.of("-Xmx256m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1");

    private final Path dataDir;
    private final Path logDir;
    private final List<String> settings;
    private final int port;
    /** A server.properties given to {@code --config} instead of {@code --port} and {@code --data-dir}. */
    private final Path configFile;
    /** JVM options before the class path: the heap, its collector and the JIT level. */
    private final List<String> jvmOptions;
    private Process process;
    /** Whether {@link #pause()} stopped it and {@link #resume()} has not let it go on yet. */
    private boolean paused;

    /** {@code settings} are {@code key=value} broker settings on top of the defaults. */
    public ChildBroker(Path dataDir, Path logDir, String... settings) throws IOException {
        this(dataDir, logDir, freePort(), null, List.of(settings), DEFAULT_JVM_OPTIONS);
    }

    private ChildBroker(Path dataDir, Path logDir, int port, Path configFile, List<String> settings,
            List<String> jvmOptions) {
        this.jvmOptions = jvmOptions;
        this.dataDir = dataDir;
        this.logDir = logDir;
        this.settings = settings;
        this.port = port;
        this.configFile = configFile;
    }

    /**
     * {@code pier start --config configFile}, as an operator runs it: listeners and data folder
     * come from the file, whose client listener is on {@code port}.
     */
    public static ChildBroker withConfigFile(Path configFile, int port, Path logDir) {
        return new ChildBroker(null, logDir, port, configFile, List.of(), DEFAULT_JVM_OPTIONS);
    }

    /**
     * As the constructor, with {@code jvmOptions} in place of the defaults (a 256 MiB heap,
     * SerialGC, C1 only): for a test that bounds the broker's memory from outside.
     */
    public static ChildBroker withJvmOptions(Path dataDir, Path logDir, List<String> jvmOptions, String... settings)
            throws IOException {
        return new ChildBroker(dataDir, logDir, freePort(), null, List.of(settings), List.copyOf(jvmOptions));
    }

    /** A free loopback port, for a config file written before the broker starts. */
    public static int freeLoopbackPort() throws IOException {
        return freePort();
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** Starts the broker and waits until it says it is ready; {@code run} names its log file. */
    public void start(int run) throws IOException {
        Path out = logDir.resolve("broker-" + run + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.pier.cli.Main", "start"));
        if (configFile != null) {
            command.addAll(List.of("--config", configFile.toString()));
        } else {
            command.addAll(List.of("--port", String.valueOf(port), "--data-dir", dataDir.toString()));
        }
        // the fixed default metrics port could be taken by another broker on this machine
        command.addAll(List.of("--set", "pier.metrics.port=0"));
        for (String setting : settings) {
            command.add("--set");
            command.add(setting);
        }
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        await("broker start " + run).atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(20)).until(() -> {
            assertAlive();
            return Files.readString(out, StandardCharsets.UTF_8).contains("Pier is ready");
        });
    }

    /** SIGKILL: no shutdown hook runs, nothing is flushed. */
    public boolean kill() throws InterruptedException {
        process.destroyForcibly();
        return process.waitFor(10, TimeUnit.SECONDS);
    }

    /**
     * SIGTERM, as an operator stops it: the shutdown hook closes the broker cleanly. Returns the
     * exit status; fails (after a SIGKILL) if it has not exited within {@code timeout}.
     */
    public int terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("the broker had not stopped " + timeout + " after SIGTERM");
        }
        return process.exitValue();
    }

    /**
     * SIGSTOP: the broker process stops at once, every thread of it, and stays stopped until
     * {@link #resume()}; the kernel keeps its sockets open and queues what clients send. Returns
     * once the kernel reports it stopped.
     */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
        paused = true;
        await("broker stopped").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(this::stopped);
    }

    /** SIGCONT after {@link #pause()}; returns once the kernel reports it running again. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
        paused = false;
        await("broker running again").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> !stopped());
    }

    /** Whether the kernel has the broker stopped (state T in /proc/PID/stat). */
    public boolean stopped() throws IOException {
        String stat = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"), StandardCharsets.UTF_8);
        // pid (comm) state ...: comm may hold spaces and parentheses, so read past the last ')'
        return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** Fails with every start's output if the broker is no longer running. */
    public void assertAlive() throws IOException {
        if (!process.isAlive()) {
            StringBuilder logs = new StringBuilder();
            try (var files = Files.list(logDir)) {
                for (Path f : files.sorted().toList()) {
                    logs.append("--- ").append(f.getFileName()).append('\n')
                            .append(Files.readString(f, StandardCharsets.UTF_8));
                }
            }
            throw new AssertionError("broker exited with " + process.exitValue() + "\n" + logs);
        }
    }

    /** Stops the broker cleanly (SIGTERM), forcibly if it takes too long. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            if (paused) {
                // A stopped process acts on SIGTERM only once it goes on; if that fails, SIGKILL
                // below ends it all the same.
                try {
                    signal("CONT");
                    paused = false;
                } catch (IOException | IllegalStateException e) {
                    process.destroyForcibly();
                }
            }
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
