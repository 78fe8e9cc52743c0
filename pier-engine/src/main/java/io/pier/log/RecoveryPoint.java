package io.pier.log;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How far the log is known to be on disk: every byte before {@code position} of the segment
 * starting at {@code segmentBaseOffset}, and every earlier segment, was fsynced. Recovery trusts
 * this region (corruption there is an error, not a torn write) and truncates only beyond it.
 *
 * <p>Stored as one text line {@code v1 <segmentBaseOffset> <position>} in
 * {@value #FILE_NAME}, replaced atomically.
 */
record RecoveryPoint(long segmentBaseOffset, int position) {
    static final String FILE_NAME = "recovery-point.checkpoint";

    /** The stored point, or null if none was ever written. */
    static RecoveryPoint read(Path dir) throws IOException {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return null;
        }
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        String[] parts = text.split(" ");
        try {
            if (parts.length == 3 && parts[0].equals("v1")) {
                RecoveryPoint p = new RecoveryPoint(Long.parseLong(parts[1]), Integer.parseInt(parts[2]));
                if (p.segmentBaseOffset >= 0 && p.position >= 0) {
                    return p;
                }
            }
        } catch (NumberFormatException e) {
            // fall through: a file written atomically cannot be half-written, so this is damage
        }
        throw new IOException("unreadable recovery checkpoint " + file + ": \"" + text + "\"");
    }

    void write(FileIO io, Path dir) throws IOException {
        String line = "v1 " + segmentBaseOffset + " " + position + "\n";
        AtomicFiles.write(io, dir.resolve(FILE_NAME), line.getBytes(StandardCharsets.UTF_8));
    }
}
