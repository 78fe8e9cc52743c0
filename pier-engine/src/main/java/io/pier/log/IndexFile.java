package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The on-disk copy of a sparse index: an append-only file of fixed-size entries. The in-memory
 * index is authoritative; this file is a rebuildable cache, so it is never fsynced and a torn
 * write only costs a rebuild on the next open. Owned by the log's thread.
 */
final class IndexFile {
    private final FileIO io;
    private final Path path;
    private FileChannel channel; // opened lazily so closed segments hold no descriptor for it

    IndexFile(FileIO io, Path path) {
        this.io = io;
        this.path = path;
    }

    Path path() {
        return path;
    }

    void append(ByteBuffer entry) throws IOException {
        if (channel == null) {
            channel = io.openAppend(path);
        }
        while (entry.hasRemaining()) {
            channel.write(entry);
        }
    }

    /** Replaces the whole file, used after a rebuild during recovery. */
    void replaceWith(ByteBuffer content) throws IOException {
        close();
        try (FileChannel ch = io.openEmpty(path)) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
        }
    }

    void close() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }

    void delete() throws IOException {
        close();
        io.deleteIfExists(path);
    }
}
