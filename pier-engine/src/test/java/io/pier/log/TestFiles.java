package io.pier.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** File helpers for tests that make their own folders (the fuzz targets make one per input). */
public final class TestFiles {
    /** A RAM-backed file system that Linux mounts on most machines. */
    private static final Path SHARED_MEMORY = Path.of("/dev/shm");

    private TestFiles() {}

    /**
     * A new temporary folder in memory ({@code /dev/shm}) where the machine has one, else in the
     * default temporary folder. For fuzz targets, which create, fsync and delete files thousands
     * of times a second: on tmpfs the same code runs on the same real files, but an fsync or a
     * directory entry costs no disk round trip, which on a disk is most of an input's time. What
     * they check does not change: an fsync's effect on power loss is tested elsewhere, by
     * {@link PowerLossFileIO}.
     */
    public static Path scratchDirectory(String prefix) throws IOException {
        if (Files.isDirectory(SHARED_MEMORY) && Files.isWritable(SHARED_MEMORY)) {
            try {
                return Files.createTempDirectory(SHARED_MEMORY, prefix);
            } catch (IOException e) {
                // mounted but unusable (full, or read-only): fall back to disk below
            }
        }
        return Files.createTempDirectory(prefix);
    }

    /** Deletes {@code dir} and everything below it; nothing if it does not exist. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
