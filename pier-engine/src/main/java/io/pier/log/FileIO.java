package io.pier.log;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Every write the broker makes in its data folder, and the moments a crash test may want to stop
 * it. The broker uses {@link #REAL}: the plain file system and no-op crash points. Crash tests plug
 * in a layer that keeps unsynced file contents and unsynced directory entries apart, so that a
 * simulated power loss can drop them, and arm a {@link CrashPoint} to stop at a chosen step; fault
 * tests plug in one that fails writes as a full disk does.
 *
 * <p>What goes through here: segment files ({@link #open}), index files and checkpoint temp files
 * ({@link #openEmpty}, {@link #openAppend}), and the directory entries that creating, renaming and
 * deleting change, with the directory fsync that makes them durable ({@link #syncDirectory}).
 * Reads that do not change the disk (listing a directory, reading a checkpoint at start-up) go to
 * the file system directly: a layer applies each change to the real files at once and keeps only
 * the knowledge of what a power loss could undo.
 *
 * <p>Every operation defaults to the real file system, so a test layer overrides only what it
 * fakes; {@link #REAL} overrides nothing.
 */
public interface FileIO {
    /** Real files, no crash points. */
    FileIO REAL = new FileIO() {};

    /**
     * Opens a segment file for reading and writing.
     *
     * @param create true to create a new file (fails if it exists), false to open an existing one
     */
    default FileChannel open(Path path, boolean create) throws IOException {
        return create
                ? FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE)
                : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** Opens a file to be written from its start: created if missing, emptied if it exists. */
    default FileChannel openEmpty(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
    }

    /** Opens a file to be written at its end, creating it if missing. */
    default FileChannel openAppend(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
    }

    /**
     * Creates {@code dir} and any missing parents. Not durable by itself: each new entry needs an
     * fsync of its parent (see {@code AtomicFiles.createDirectories}).
     */
    default void createDirectories(Path dir) throws IOException {
        Files.createDirectories(dir);
    }

    /**
     * Renames {@code source} to {@code target} in one step, replacing {@code target} if it exists.
     * Durable only once the directory is fsynced.
     *
     * @throws java.nio.file.AtomicMoveNotSupportedException if the file system cannot do it in one step
     */
    default void move(Path source, Path target) throws IOException {
        Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Deletes a file, or an empty directory, if it exists. Durable only once the directory is
     * fsynced.
     */
    default boolean deleteIfExists(Path path) throws IOException {
        return Files.deleteIfExists(path);
    }

    /** fsync of {@code dir}: makes every entry created, renamed or deleted in it durable. */
    default void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * Called when the writer reaches {@code point}. The real implementation does nothing; a test
     * implementation may throw to simulate the process dying exactly there.
     */
    default void crashPoint(CrashPoint point) throws IOException {}
}
