package io.pier.it;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A probe program (a single Java source file) run in a child JVM with Java's source launcher and
 * only the jars of one kafka-clients release on its class path, so it compiles and runs against
 * that release alone. Bounded: a child that outlives its deadline is killed and reported.
 */
final class ProbeJvm {
    /** How a probe ended: its exit code (-1 when it was killed at its deadline) and everything it printed. */
    record Result(String what, int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }

        String describe() {
            return what + " exited " + exitCode + "; output:\n" + output;
        }
    }

    private ProbeJvm() {}

    /** Runs {@code program} with the jars in {@code jars} and {@code args}; waits at most {@code timeoutS}. */
    static Result run(Path jars, Path program, long timeoutS, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // A short-lived client JVM: no need for the optimizing compiler, start faster.
                "-XX:TieredStopAtLevel=1",
                "-cp", jars + File.separator + "*", program.toString()));
        command.addAll(List.of(args));
        Path output = Files.createTempFile("pier-probe-", ".log");
        try {
            Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            boolean exited = child.waitFor(timeoutS, TimeUnit.SECONDS);
            if (!exited) {
                child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String what = program.getFileName() + " on " + jars.getFileName();
            return new Result(what, exited ? child.exitValue() : -1, Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
