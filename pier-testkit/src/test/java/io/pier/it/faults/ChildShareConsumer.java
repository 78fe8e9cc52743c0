package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A share consumer in a child JVM on this test's class path, by default a
 * {@link PausableShareConsumer}: the test can pause the whole process with SIGSTOP (nothing in it
 * runs, not even the client's heartbeat thread, and its connections stay open), let it go on with
 * SIGCONT, end it with SIGTERM or SIGKILL, and read what it reported in its output file.
 */
final class ChildShareConsumer implements AutoCloseable {
    /** Prefix of the child's report lines in its output, among the client's own log lines. */
    static final String EVENT = "CHILD-CONSUMER ";

    /**
     * One reported line: {@code kind offset count [detail] [@atMs]}; offset and count -1 where
     * there are none, {@code atMs} (the child's wall clock, comparable across processes on one
     * machine) -1 where the child did not say.
     */
    record Event(String kind, long offset, short count, String detail, long atMs) {
        Event(String kind, long offset, short count, String detail) {
            this(kind, offset, count, detail, -1);
        }
    }

    private final Process process;
    private final Path output;

    ChildShareConsumer(String bootstrap, String topic, String group, int holdBatch, Path output) throws IOException {
        this(output, PausableShareConsumer.class, bootstrap, topic, group, String.valueOf(holdBatch));
    }

    /** Starts {@code main} with {@code args}, its standard output and error going to {@code output}. */
    ChildShareConsumer(Path output, Class<?> main, String... args) throws IOException {
        this.output = output;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }

    /** Everything it reported so far, in order; a line it is still writing is left for the next call. */
    List<Event> events() throws IOException {
        String text = Files.readString(output, StandardCharsets.UTF_8);
        return text.substring(0, text.lastIndexOf('\n') + 1).lines()
                .filter(l -> l.startsWith(EVENT))
                .map(l -> parse(l.substring(EVENT.length())))
                .toList();
    }

    /** Its whole output, for failure messages. */
    String output() throws IOException {
        return Files.readString(output, StandardCharsets.UTF_8);
    }

    void pause() throws Exception {
        signal("STOP");
    }

    void resume() throws Exception {
        signal("CONT");
    }

    /** Whether the kernel has it stopped (state T in /proc/PID/stat). */
    boolean stopped() throws IOException {
        String stat = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"), StandardCharsets.UTF_8);
        // pid (comm) state ...: comm may hold spaces and parentheses, so read past the last ')'
        return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
    }

    boolean alive() {
        return process.isAlive();
    }

    /** SIGTERM (what {@link Process#destroy} sends on Linux): the JVM runs its shutdown hooks, then exits. */
    void terminate() {
        process.destroy();
    }

    /** SIGKILL (what {@link Process#destroyForcibly} sends on Linux): gone at once; the kernel closes its sockets. */
    void kill() {
        process.destroyForcibly();
    }

    /**
     * A line on its standard input, a command of its main class: {@link PausableShareConsumer#GO},
     * {@link AcceptingShareConsumer#HOLD}, or either's {@code STOP}.
     */
    void command(String line) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    boolean waitFor(long seconds) throws InterruptedException {
        return process.waitFor(seconds, TimeUnit.SECONDS);
    }

    int exitValue() {
        return process.exitValue();
    }

    /** SIGKILL, which ends a stopped process too. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroyForcibly();
        try {
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("child consumer killed").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void signal(String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).as("kill -%s returned", name).isTrue();
        assertThat(kill.exitValue()).as("kill -%s exit code", name).isZero();
    }

    private static Event parse(String line) {
        String body = line.trim();
        long atMs = -1;
        int at = body.lastIndexOf(" @");
        if (at > 0) {
            atMs = Long.parseLong(body.substring(at + 2));
            body = body.substring(0, at);
        }
        String[] f = body.split(" ");
        return switch (f[0]) {
            case "DELIVERED", "CONFIRMED" -> new Event(f[0], Long.parseLong(f[1]), Short.parseShort(f[2]), "", atMs);
            case "REFUSED" -> new Event(f[0], Long.parseLong(f[1]), Short.parseShort(f[2]), f[3], atMs);
            default -> new Event(f[0], -1, (short) -1, body.substring(f[0].length()).trim(), atMs);
        };
    }
}
