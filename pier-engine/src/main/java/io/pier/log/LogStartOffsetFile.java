package io.pier.log;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Persists a log start offset moved by DeleteRecords, which may point inside a segment and so
 * cannot be derived from file names, or set by a mirror's restart, which may lie below every
 * earlier segment. One text line {@code v1 <offset>}, replaced atomically.
 */
final class LogStartOffsetFile {
    static final String FILE_NAME = "log-start-offset.checkpoint";

    private LogStartOffsetFile() {}

    /** The stored offset, or 0 when none was stored. */
    static long read(Path dir) throws IOException {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return 0;
        }
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        String[] parts = text.split(" ");
        try {
            if (parts.length == 2 && parts[0].equals("v1") && Long.parseLong(parts[1]) >= 0) {
                return Long.parseLong(parts[1]);
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IOException("unreadable log start offset checkpoint " + file + ": \"" + text + "\"");
    }

    static void write(FileIO io, Path dir, long offset) throws IOException {
        AtomicFiles.write(io, dir.resolve(FILE_NAME), ("v1 " + offset + "\n").getBytes(StandardCharsets.UTF_8));
    }
}
