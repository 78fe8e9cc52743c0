package io.pier.it;

import io.pier.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Runs a {@code pier} command in this JVM, as the launcher would, and reads its table output. */
public final class PierCli {
    /** What a command printed, and its exit code. */
    public record Run(int code, String out, String err) {}

    private PierCli() {}

    public static Run pier(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The whitespace-separated columns of the first output line starting with {@code prefix}; none: empty. */
    public static List<String> columns(String output, String prefix) {
        return output.lines().filter(l -> l.startsWith(prefix)).findFirst()
                .map(l -> List.of(l.trim().split("\\s+"))).orElse(List.of());
    }
}
