package io.pier.bench.harness;

import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A librdkafka client against the broker: {@code kcat} producing records from a file and
 * consuming them back, each timed as a whole process run (start-up and metadata included).
 * Optional: when {@code kcat} is not on the PATH the rows are skipped.
 */
final class Kcat {
    private final String executable;
    private final Duration cap;

    private Kcat(String executable, Duration cap) {
        this.executable = executable;
        this.cap = cap;
    }

    /** The {@code kcat} on the PATH (or {@code kafkacat}, its old name), or null when there is none. */
    static Kcat find(Duration cap) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String name : List.of("kcat", "kafkacat")) {
            for (String dir : path.split(File.pathSeparator)) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                    return new Kcat(Path.of(dir, name).toString(), cap);
                }
            }
        }
        return null;
    }

    /** {@code kcat -V}'s first version line, e.g. "Version 1.7.1 (... librdkafka 2.0.2 ...)". */
    String version() {
        try {
            Process p = new ProcessBuilder(executable, "-V").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            String kcat = "";
            String rdkafka = "";
            for (String line : out.split("\n")) {
                if (line.startsWith("Version ")) {
                    kcat = line.split("\\s+")[1];
                    int i = line.indexOf("librdkafka ");
                    if (i >= 0) {
                        rdkafka = line.substring(i).split("\\s+")[1];
                    }
                }
            }
            return "kcat " + kcat + (rdkafka.isEmpty() ? "" : ", librdkafka " + rdkafka);
        } catch (IOException | RuntimeException e) {
            return "kcat";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "kcat";
        }
    }

    /** A file of {@code count} lines of {@code size} bytes each (plus the newline delimiter). */
    static Path recordsFile(Path dir, int count, int size) throws IOException {
        Path f = dir.resolve("kcat-" + count + "x" + size + ".txt");
        if (Files.exists(f) && Files.size(f) == (long) count * (size + 1)) {
            return f;
        }
        Files.createDirectories(dir);
        String line = "x".repeat(size);
        try (BufferedWriter w = Files.newBufferedWriter(f, StandardCharsets.US_ASCII)) {
            for (int i = 0; i < count; i++) {
                w.write(line);
                w.write('\n');
            }
        }
        return f;
    }

    /**
     * {@code kcat -P -l} of every line of {@code file} to partition 0, acks=all, idempotent (as
     * the Java produce rows); records per second over the whole process run.
     */
    Workloads.Throughput produce(String bootstrap, String topic, Path file, int count, Path log) throws Exception {
        long t0 = System.nanoTime();
        run(List.of(executable, "-P", "-b", bootstrap, "-t", topic, "-p", "0", "-X", "acks=all",
                "-X", "enable.idempotence=true", "-l", file.toString()), log, null);
        long elapsed = System.nanoTime() - t0;
        return new Workloads.Throughput(count * 1e9 / elapsed, count);
    }

    /**
     * {@code kcat -C -e -o beginning -q} of partition 0 until its end; records per second over the
     * whole process run (librdkafka's ListOffsets v2 included), counted from the lines kcat printed.
     */
    Workloads.Throughput consume(String bootstrap, String topic, Path log) throws Exception {
        long t0 = System.nanoTime();
        long[] lines = new long[1];
        run(List.of(executable, "-C", "-b", bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q"),
                log, lines);
        long elapsed = System.nanoTime() - t0;
        return new Workloads.Throughput(lines[0] * 1e9 / elapsed, lines[0]);
    }

    /** Runs kcat to its end within the cap; stderr to {@code log}; stdout counted as lines or dropped. */
    private void run(List<String> cmd, Path log, long[] countLines) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(cmd)).redirectError(log.toFile());
        if (countLines == null) {
            pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        Process p = pb.start();
        Thread reader = null;
        if (countLines != null) {
            reader = new Thread(() -> {
                byte[] buf = new byte[1 << 16];
                long n = 0;
                try (InputStream in = p.getInputStream()) {
                    int r;
                    while ((r = in.read(buf)) > 0) {
                        for (int i = 0; i < r; i++) {
                            if (buf[i] == '\n') {
                                n++;
                            }
                        }
                    }
                } catch (IOException e) {
                    // process ended
                }
                countLines[0] = n;
            }, "kcat-stdout");
            reader.start();
        }
        if (!p.waitFor(cap.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("kcat hit the time cap; see " + log);
        }
        if (reader != null) {
            reader.join(10_000);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("kcat exited with " + p.exitValue() + "; see " + log);
        }
    }
}
