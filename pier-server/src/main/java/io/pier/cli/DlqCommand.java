package io.pier.cli;

import static io.pier.cli.AdminCli.value;

import io.pier.dlq.DeadLetterRedrive;
import io.pier.dlq.RedriveException;
import io.pier.dlq.RedriveListener;
import io.pier.dlq.RedriveOutcome;
import io.pier.dlq.RedriveResult;
import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

/**
 * {@code pier dlq redrive --bootstrap-server HOST:PORT --dlq-topic T [--group G] [--to-topic T2]
 * [--max N] [--dry-run] [--command-config FILE]}: moves the dead letters of share groups back to
 * their source topics ({@link DeadLetterRedrive}). A progress bar on stderr when that is a
 * terminal, else a line every few seconds; on stdout the letters a dry run would move, every
 * letter that failed, and a summary line. Exit code 0 when every letter looked at was moved or
 * skipped, 1 when any failed or the run stopped on an error, 2 for a usage error.
 */
final class DlqCommand {
    private static final long PLAIN_PROGRESS_EVERY_NANOS = Duration.ofSeconds(5).toNanos();
    private static final long BAR_EVERY_NANOS = Duration.ofMillis(100).toNanos();

    private DlqCommand() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length < 2 || !args[1].equals("redrive")) {
            err.println(args.length < 2 ? "pier: dlq needs a subcommand: redrive" : "pier: unknown dlq subcommand " + args[1]);
            usage(err);
            return 2;
        }
        String bootstrap = null;
        String dlqTopic = null;
        String group = null;
        String toTopic = null;
        String progressTopic = null;
        Long max = null;
        boolean dryRun = false;
        Properties extra = new Properties();
        DeadLetterRedrive.Builder builder;
        try {
            for (int i = 2; i < args.length; i++) {
                switch (args[i]) {
                    case "--bootstrap-server" -> bootstrap = value(args, ++i);
                    case "--dlq-topic" -> dlqTopic = value(args, ++i);
                    case "--group" -> group = value(args, ++i);
                    case "--to-topic" -> toTopic = value(args, ++i);
                    case "--progress-topic" -> progressTopic = value(args, ++i);
                    case "--max" -> {
                        String v = value(args, ++i);
                        try {
                            max = Long.parseLong(v);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("--max expects a whole number, got " + v);
                        }
                        if (max < 1) {
                            throw new IllegalArgumentException("--max must be at least 1, got " + v);
                        }
                    }
                    case "--dry-run" -> dryRun = true;
                    case "--command-config" -> extra.putAll(load(Path.of(value(args, ++i))));
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bootstrap == null || dlqTopic == null) {
                throw new IllegalArgumentException("--bootstrap-server and --dlq-topic are required");
            }
            builder = DeadLetterRedrive.builder(bootstrap, dlqTopic).clientProperties(extra).group(group)
                    .toTopic(toTopic).dryRun(dryRun);
            if (max != null) {
                builder.maxRecords(max);
            }
            if (progressTopic != null) {
                builder.progressTopic(progressTopic);
            }
        } catch (IllegalArgumentException e) {
            err.println("pier: " + e.getMessage());
            usage(err);
            return 2;
        } catch (IOException e) {
            err.println("pier: cannot read --command-config: " + e.getMessage());
            return 2;
        }
        Progress progress = new Progress(out, err, err == System.err && isTerminal(), dryRun);
        RedriveResult result;
        try {
            result = builder.listener(progress).build().run();
        } catch (IllegalArgumentException e) {
            err.println("pier: " + e.getMessage());
            return 2;
        } catch (RedriveException e) {
            progress.finish();
            err.println("pier: " + e.getMessage());
            out.println((dryRun ? "Dry run of " : "Redrive of ") + dlqTopic + " stopped: " + progress.counts()
                    + " before the error");
            return 1;
        }
        progress.finish();
        if (!result.failures().isEmpty()) {
            out.println("Not moved (" + result.failures().size() + "); they stay in " + dlqTopic
                    + " and later runs do not try them again:");
            for (RedriveOutcome o : result.failures()) {
                out.println("  FAILED " + o.describe());
            }
        }
        out.println(result.summary(dlqTopic));
        return result.failed() > 0 ? 1 : 0;
    }

    /** Whether stderr is a terminal a bar can be redrawn on (JDK 22+ says so exactly; before, a console means one). */
    private static boolean isTerminal() {
        Console console = System.console();
        if (console == null) {
            return false;
        }
        try {
            return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
        } catch (ReflectiveOperationException e) {
            return true;
        }
    }

    /** Draws the bar (or prints lines) and lists a dry run's letters. */
    private static final class Progress implements RedriveListener {
        private final PrintStream out;
        private final PrintStream err;
        private final boolean terminal;
        private final boolean dryRun;
        private long moved;
        private long skipped;
        private long failed;
        private long scanned;
        private long total;
        private long lastDrawn = System.nanoTime();
        private boolean barShown;

        Progress(PrintStream out, PrintStream err, boolean terminal, boolean dryRun) {
            this.out = out;
            this.err = err;
            this.terminal = terminal;
            this.dryRun = dryRun;
        }

        @Override
        public void started(long lettersToScan) {
            if (!terminal) {
                err.println("pier: " + lettersToScan + " letter(s) to look at");
            }
        }

        @Override
        public void outcome(RedriveOutcome o) {
            switch (o.status()) {
                case MOVED, WOULD_MOVE -> moved++;
                case SKIPPED_OTHER_GROUP, SKIPPED_ALREADY_MOVED -> skipped++;
                case FAILED -> failed++;
            }
            if (o.status() == RedriveOutcome.Status.WOULD_MOVE) {
                clearBar();
                out.println("would move " + o.describe());
            }
        }

        @Override
        public void progress(long scanned, long lettersToScan) {
            this.scanned = scanned;
            this.total = lettersToScan;
            long now = System.nanoTime();
            if (terminal) {
                if (now - lastDrawn >= BAR_EVERY_NANOS || scanned >= lettersToScan) {
                    lastDrawn = now;
                    drawBar();
                }
            } else if (now - lastDrawn >= PLAIN_PROGRESS_EVERY_NANOS) {
                lastDrawn = now;
                err.println("pier: " + scanned + "/" + lettersToScan + " letters looked at: " + counts());
            }
        }

        private void drawBar() {
            int width = 30;
            int filled = total == 0 ? width : (int) Math.min(width, scanned * width / total);
            err.print("\r[" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + scanned + "/" + total + " "
                    + counts() + "\u001b[K");
            err.flush();
            barShown = true;
        }

        String counts() {
            return (dryRun ? "would move " : "moved ") + moved + ", skipped " + skipped + ", failed " + failed;
        }

        void finish() {
            if (terminal && scanned > 0) {
                drawBar(); // the last state, which the throttle may have skipped
            }
            if (barShown) {
                err.println();
                barShown = false;
            }
        }

        private void clearBar() {
            if (barShown) {
                err.print("\r\u001b[K");
                err.flush();
                barShown = false;
            }
        }
    }

    private static Properties load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    static void usage(PrintStream s) {
        s.println("usage: pier dlq redrive --bootstrap-server HOST:PORT --dlq-topic TOPIC [--group GROUP]"
                + " [--to-topic TOPIC] [--max N]");
        s.println("         [--dry-run] [--command-config FILE] [--progress-topic TOPIC]");
        s.println("  Moves the dead letters of share groups back to the topic-partitions their records came from,");
        s.println("  exactly once: progress is kept in " + DeadLetterRedrive.DEFAULT_PROGRESS_TOPIC
                + " in the same transactions. --dry-run writes nothing and lists what would move.");
    }
}
