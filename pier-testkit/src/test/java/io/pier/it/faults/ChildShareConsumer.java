package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PausableShareConsumer} in a child JVM on this test's class path: the test can pause the
 * whole process with SIGSTOP (nothing in it runs, not even the client's heartbeat thread, and its
 * connections stay open), let it go on with SIGCONT, and read what it reported in its output file.
 */
final class ChildShareConsumer implements AutoCloseable {
    /** One reported line: {@code kind offset count [detail]}; offset and count -1 where there are none. */
    record Event(String kind, long offset, short count, String detail) {}

    private final Process process;
    private final Path output;

    ChildShareConsumer(String bootstrap, String topic, String group, int holdBatch, Path output) throws IOException {
        this.output = output;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), PausableShareConsumer.class.getName(),
                bootstrap, topic, group, String.valueOf(holdBatch)))
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }

    /** Everything it reported so far, in order. */
    List<Event> events() throws IOException {
        return Files.readAllLines(output, StandardCharsets.UTF_8).stream()
                .filter(l -> l.startsWith(PausedConsumerIT.EVENT))
                .map(l -> parse(l.substring(PausedConsumerIT.EVENT.length())))
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

    /** A line on its standard input: {@link PausableShareConsumer#GO} or {@link PausableShareConsumer#STOP}. */
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
        String[] f = line.trim().split(" ");
        return switch (f[0]) {
            case "DELIVERED", "CONFIRMED" -> new Event(f[0], Long.parseLong(f[1]), Short.parseShort(f[2]), "");
            case "REFUSED" -> new Event(f[0], Long.parseLong(f[1]), Short.parseShort(f[2]), f[3]);
            default -> new Event(f[0], -1, (short) -1, line.substring(f[0].length()).trim());
        };
    }
}
