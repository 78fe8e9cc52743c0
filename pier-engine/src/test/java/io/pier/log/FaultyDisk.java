package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link FileIO} over real files with faults to switch on. From {@link #fill()} on, the disk is
 * full: every write to a file the broker writes (segments, indexes, checkpoint temp files), every
 * new file and every new directory fails as {@code ENOSPC} does, before a byte is written. Reads,
 * forces, truncations, renames and deletions go on working, as on a real full disk.
 * {@link #fill(Path)} does the same for one folder only, so one store's log fails while the rest of
 * the broker still serves. From {@link #failDeletes()} on, deleting a file fails with an I/O error
 * ({@code EIO}), as on a failing device.
 */
public final class FaultyDisk implements FileIO {
    private volatile boolean full;
    private final Set<Path> fullFolders = ConcurrentHashMap.newKeySet();
    private volatile boolean deletesFail;
    private final AtomicInteger refusedWrites = new AtomicInteger();
    private final AtomicInteger failedDeletes = new AtomicInteger();

    /** The whole disk is full from now on. */
    public void fill() {
        full = true;
    }

    /** Everything under {@code folder} is refused from now on, as if it were a full disk of its own. */
    public void fill(Path folder) {
        fullFolders.add(folder.toAbsolutePath().normalize());
    }

    /** Deletions fail from now on. */
    public void failDeletes() {
        deletesFail = true;
    }

    public int refusedWrites() {
        return refusedWrites.get();
    }

    public int failedDeletes() {
        return failedDeletes.get();
    }

    @Override
    public FileChannel open(Path path, boolean create) throws IOException {
        if (create) {
            refuseIfFull(path);
        }
        return new Channel(path, FileIO.REAL.open(path, create));
    }

    @Override
    public FileChannel openEmpty(Path path) throws IOException {
        refuseIfFullAndMissing(path);
        return new Channel(path, FileIO.REAL.openEmpty(path));
    }

    @Override
    public FileChannel openAppend(Path path) throws IOException {
        refuseIfFullAndMissing(path);
        return new Channel(path, FileIO.REAL.openAppend(path));
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        refuseIfFullAndMissing(dir);
        FileIO.REAL.createDirectories(dir);
    }

    @Override
    public boolean deleteIfExists(Path path) throws IOException {
        if (deletesFail && Files.exists(path)) {
            failedDeletes.incrementAndGet();
            throw new IOException("Input/output error: " + path);
        }
        return FileIO.REAL.deleteIfExists(path);
    }

    /** A new entry needs space in its directory, and an inode. */
    private void refuseIfFullAndMissing(Path path) throws IOException {
        if (!Files.exists(path)) {
            refuseIfFull(path);
        }
    }

    private void refuseIfFull(Path path) throws IOException {
        if (full || isUnderFullFolder(path)) {
            refusedWrites.incrementAndGet();
            throw new IOException("No space left on device");
        }
    }

    private boolean isUnderFullFolder(Path path) {
        if (fullFolders.isEmpty()) {
            return false;
        }
        Path p = path.toAbsolutePath().normalize();
        for (Path folder : fullFolders) {
            if (p.startsWith(folder)) {
                return true;
            }
        }
        return false;
    }

    /** A real channel whose writes fail once its disk, or its folder, is full. */
    private final class Channel extends ForwardingFileChannel {
        private final Path path;

        Channel(Path path, FileChannel real) {
            super(real);
            this.path = path;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            refuseIfFull(path);
            return real.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            refuseIfFull(path);
            return real.write(srcs, offset, length);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            refuseIfFull(path);
            return real.write(src, position);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            refuseIfFull(path);
            return real.transferFrom(src, position, count);
        }
    }
}
