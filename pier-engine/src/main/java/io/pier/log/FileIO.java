package io.pier.log;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How a log opens its segment files, and where it reports the moments a crash test may want to
 * stop it. The broker uses {@link #REAL}: plain {@link FileChannel}s and no-op crash points.
 * Crash tests plug in a channel that keeps unsynced writes apart so that a simulated power loss
 * can drop them (or tear the last one), and arm a {@link CrashPoint} to stop at a chosen step.
 *
 * <p>Only segment data goes through here: it is what an fsync protects. Index files are a
 * rebuildable cache, and checkpoint files are written atomically and fsynced before their rename.
 */
public interface FileIO {
    /** Real files, no crash points. */
    FileIO REAL = new FileIO() {
        @Override
        public FileChannel open(Path path, boolean create) throws IOException {
            return create
                    ? FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                            StandardOpenOption.WRITE)
                    : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
    };

    /**
     * Opens a segment file for reading and writing.
     *
     * @param create true to create a new file (fails if it exists), false to open an existing one
     */
    FileChannel open(Path path, boolean create) throws IOException;

    /**
     * Called when the writer reaches {@code point}. The real implementation does nothing; a test
     * implementation may throw to simulate the process dying exactly there.
     */
    default void crashPoint(CrashPoint point) throws IOException {}
}
