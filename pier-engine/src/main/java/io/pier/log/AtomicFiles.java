package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Crash-safe whole-file replacement: write a temp file, fsync it, rename over the target, fsync
 * the folder. After a crash a reader sees either the old or the new content, never a mix. Every
 * step goes through a {@link FileIO}, so crash tests see the temp file, the rename and the
 * directory fsync, and can stop between them.
 */
public final class AtomicFiles {
    private AtomicFiles() {}

    public static void write(FileIO io, Path target, byte[] content) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        createDirectories(io, dir);
        Path tmp = dir.resolve(target.getFileName() + ".tmp");
        try (FileChannel ch = io.openEmpty(tmp)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        io.crashPoint(CrashPoint.CHECKPOINT_BEFORE_RENAME);
        try {
            io.move(tmp, target);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("file system cannot rename atomically: " + dir, e);
        }
        io.crashPoint(CrashPoint.CHECKPOINT_BEFORE_DIRECTORY_FSYNC);
        io.syncDirectory(dir);
    }

    /**
     * Creates {@code dir} and any missing parents so that they survive a power loss: each new
     * folder's entry is fsynced in its parent. The fsync of a folder makes the entries in it
     * durable, not its own entry one level up: without this, a checkpoint written, renamed and
     * fsynced into a folder made a moment before could vanish with that folder.
     */
    public static void createDirectories(FileIO io, Path dir) throws IOException {
        Path abs = dir.toAbsolutePath();
        Path existing = abs;
        while (existing != null && !Files.isDirectory(existing)) {
            existing = existing.getParent();
        }
        if (abs.equals(existing)) {
            return;
        }
        io.createDirectories(abs);
        for (Path created = abs; !created.equals(existing); created = created.getParent()) {
            io.syncDirectory(created.getParent());
        }
    }
}
