package io.pier.bench.harness;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One broker in its own JVM on 127.0.0.1: started, probed until it answers a request, measured
 * (resident memory) and stopped. Subclasses only say how to prepare and launch it.
 */
abstract class BrokerProcess implements AutoCloseable {
    final String name;
    final List<String> jvmFlags;
    final Path workDir;
    final int port;
    Process process;
    long startupMs;
    /** Set by {@link #enableSecurity}: the TLS and SASL settings, and the ports of the SSL and SASL_SSL listeners. */
    Security security;
    int sslPort = -1;
    int saslSslPort = -1;

    BrokerProcess(String name, List<String> jvmFlags, Path workDir) throws IOException {
        this(name, jvmFlags, workDir, freePort());
    }

    /** On a given port: a node restarted where its clients last saw it. */
    BrokerProcess(String name, List<String> jvmFlags, Path workDir, int port) {
        this.name = name;
        this.jvmFlags = jvmFlags;
        this.workDir = workDir;
        this.port = port;
    }

    /** Work before the clock starts (Kafka formats its storage here). */
    abstract void prepare() throws Exception;

    /** The command after {@code java <jvm flags>}. */
    abstract List<String> command();

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /**
     * Serve an SSL and a SASL_SSL listener besides PLAINTEXT (which stays the first listener, the
     * one the start-up probe and the other rows use). Call before {@link #start}.
     */
    void enableSecurity(Security s) throws IOException {
        this.security = s;
        this.sslPort = freePort();
        this.saslSslPort = freePort();
    }

    /** The bootstrap address of the listener with this security protocol. */
    String bootstrap(String protocol) {
        return switch (protocol) {
            case Security.PLAINTEXT -> bootstrap();
            case Security.SSL -> requireSecurity("127.0.0.1:" + sslPort);
            case Security.SASL_SSL -> requireSecurity("127.0.0.1:" + saslSslPort);
            default -> throw new IllegalArgumentException("no listener for " + protocol);
        };
    }

    private String requireSecurity(String address) {
        if (security == null) {
            throw new IllegalStateException(name + " was started without its SSL and SASL_SSL listeners");
        }
        return address;
    }

    /** The listeners after PLAINTEXT, as {@code ,SSL://127.0.0.1:P,SASL_SSL://127.0.0.1:Q}, or empty. */
    String securityListeners() {
        return security == null ? "" : "," + Security.SSL + "://127.0.0.1:" + sslPort + ","
                + Security.SASL_SSL + "://127.0.0.1:" + saslSslPort;
    }

    long pid() {
        return process.pid();
    }

    /** Starts the JVM and waits for the first answered ApiVersions request; returns the time it took. */
    long start(List<String> extraJvmFlags) throws Exception {
        Files.createDirectories(workDir);
        prepare();
        List<String> cmd = new ArrayList<>();
        cmd.add(javaExecutable());
        cmd.addAll(jvmFlags);
        cmd.addAll(extraJvmFlags);
        cmd.addAll(command());
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(workDir.resolve(name + ".out").toFile());
        long t0 = System.nanoTime();
        process = pb.start();
        awaitFirstAnswer(t0 + TimeUnit.SECONDS.toNanos(120));
        startupMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        return startupMs;
    }

    /** VmRSS of the broker process in MiB, or -1 if unreadable. */
    double rssMiB() {
        return rssMiB(process.pid());
    }

    /**
     * CPU time the broker process has used so far (user + system, all its threads, living and
     * exited), in nanoseconds, from {@code /proc/<pid>/stat}; -1 if unreadable. Resolution is one
     * clock tick ({@code getconf CLK_TCK}, usually 10 ms).
     */
    long cpuNanos() {
        return cpuNanos(process.pid());
    }

    /** CPU time so far of this JVM's JIT compiler threads (C1 and C2); -1 if unreadable. */
    long jitCpuNanos() {
        return threadCpuNanos(process.pid(), name -> name.startsWith("C1 CompilerThre")
                || name.startsWith("C2 CompilerThre"));
    }

    /** CPU time so far (user + system) of the threads of {@code pid} whose name {@code named} takes; -1 if unreadable. */
    static long threadCpuNanos(long pid, java.util.function.Predicate<String> named) {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (named.test(name)) {
                    ticks += cpuTicks(stat);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return ticks * 1_000_000_000L / clockTicksPerSecond();
    }

    static long cpuNanos(long pid) {
        try {
            return cpuTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat"))) * 1_000_000_000L
                    / clockTicksPerSecond();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** utime + stime, in clock ticks, of a {@code /proc/.../stat} line (a process's or a thread's). */
    private static long cpuTicks(String stat) {
        // Fields after the command name in parentheses (which may hold spaces) start at field 3.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
    }

    private static volatile long clockTicks;

    /** {@code getconf CLK_TCK}, read once; 100 if it cannot be run. */
    static long clockTicksPerSecond() {
        long t = clockTicks;
        if (t > 0) {
            return t;
        }
        t = 100;
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                t = Long.parseLong(out);
            }
        } catch (IOException | RuntimeException e) {
            t = 100;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        clockTicks = t;
        return t;
    }

    static double rssMiB(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    String kb = line.substring(6).trim().split("\\s+")[0];
                    return Long.parseLong(kb) / 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    @Override
    public void close() throws InterruptedException {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            System.err.println("[bench] " + name + " did not stop in 60 s, killing it");
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private void awaitFirstAnswer(long deadlineNanos) throws Exception {
        int correlation = 1;
        while (System.nanoTime() < deadlineNanos) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue()
                        + " during start-up; see " + workDir.resolve(name + ".out"));
            }
            if (apiVersionsAnswered(port, correlation++)) {
                return;
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException(name + " did not answer within 120 s");
    }

    /** Sends ApiVersions v0 over a plain socket; true when a response with our correlation id came back. */
    static boolean apiVersionsAnswered(int port, int correlation) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            s.setSoTimeout(2000);
            byte[] clientId = "pier-bench-probe".getBytes(StandardCharsets.UTF_8);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(2 + 2 + 4 + 2 + clientId.length);
            out.writeShort(18); // ApiVersions
            out.writeShort(0);
            out.writeInt(correlation);
            out.writeShort(clientId.length);
            out.write(clientId);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int size = in.readInt();
            return size >= 4 && in.readInt() == correlation;
        } catch (IOException e) {
            return false;
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
