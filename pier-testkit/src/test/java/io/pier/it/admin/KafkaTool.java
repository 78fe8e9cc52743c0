package io.pier.it.admin;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.utils.internals.Exit;

/**
 * Runs one of Kafka's command-line tools in-process, unchanged, through its {@code main}: exits
 * become a return value (Kafka's {@link Exit} hook) and what it prints is captured.
 */
public final class KafkaTool {
    /** A tool's {@code main}. */
    @FunctionalInterface
    public interface Main {
        void run(String[] args) throws Exception;
    }

    /** How a run ended: the exit code (0 when main returned) and what was printed. */
    public record Result(int exitCode, String out, String err) {}

    private static final class ExitCalled extends RuntimeException {
        private static final long serialVersionUID = 1L;
        ExitCalled(int code) {
            super("exit " + code, null, false, false);
        }
    }

    private KafkaTool() {}

    /** Runs {@code main} with {@code args}; one tool at a time, as System.out is process-wide. */
    public static synchronized Result run(Main main, String... args) throws Exception {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        // Some tools catch Throwable around an inner exit and exit again with 1: the first one counts.
        AtomicReference<Integer> firstExit = new AtomicReference<>();
        Exit.Procedure exit = (code, message) -> {
            firstExit.compareAndSet(null, code);
            throw new ExitCalled(code);
        };
        Exit.setExitProcedure(exit);
        Exit.setHaltProcedure(exit);
        Exit.setShutdownHookAdder((name, hook) -> { });
        try {
            System.setOut(new PrintStream(outBytes, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
            main.run(args);
        } catch (ExitCalled e) {
            // Expected: how the tool ended; the code is in firstExit.
        } finally {
            System.setOut(out);
            System.setErr(err);
            Exit.resetExitProcedure();
            Exit.resetHaltProcedure();
            Exit.resetShutdownHookAdder();
        }
        int exitCode = firstExit.get() == null ? 0 : firstExit.get();
        Result result = new Result(exitCode, outBytes.toString(StandardCharsets.UTF_8),
                errBytes.toString(StandardCharsets.UTF_8));
        // Echo to the test's log, so a failing assertion shows what the tool said.
        out.println("$ " + String.join(" ", args) + " (exit " + exitCode + ")\n" + result.out()
                + (result.err().isEmpty() ? "" : "stderr:\n" + result.err()));
        return result;
    }

    /**
     * One column of a perf tool's CSV report (kafka-consumer-perf-test, kafka-share-consumer-perf-test):
     * the value under {@code column} in the line after the header that names it.
     */
    public static String perfReportValue(Result perf, String column) {
        List<String> lines = perf.out().lines().filter(l -> !l.isBlank()).toList();
        int header = lines.indexOf(lines.stream().filter(l -> l.contains(column)).findFirst()
                .orElseThrow(() -> new AssertionError("no header in:\n" + perf.out())));
        List<String> names = List.of(lines.get(header).split(",\\s*"));
        List<String> values = List.of(lines.get(header + 1).split(",\\s*"));
        return values.get(names.indexOf(column)).trim();
    }
}
