package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 *
 * <p>I/O errors on one folder, as a failing device gives them ({@code EIO}, "Input/output error"):
 * from {@link #failWrites(Path)} on, every write to a file under the folder fails before a byte is
 * written; from {@link #failForces(Path)} on, every fsync of a file under it, and of the folder or
 * one below it, fails. A failed file fsync also loses what was written to that file since its last
 * good fsync, as Linux does (the dirty pages are dropped and marked clean, "fsyncgate"): the file
 * reads back as it was then, so whatever a broker confirmed without a good fsync is gone on the next
 * start, and a test sees it.
 */
public final class FaultyDisk implements FileIO {
    private volatile boolean full;
    private final Set<Path> fullFolders = ConcurrentHashMap.newKeySet();
    private volatile boolean deletesFail;
    private final AtomicInteger refusedWrites = new AtomicInteger();
    private final AtomicInteger failedDeletes = new AtomicInteger();
    private final Set<Path> failingWriteFolders = ConcurrentHashMap.newKeySet();
    private final Set<Path> failingForceFolders = ConcurrentHashMap.newKeySet();
    private final AtomicInteger ioErrors = new AtomicInteger();

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

    /** Writes to files under {@code folder} fail with EIO from now on. */
    public void failWrites(Path folder) {
        failingWriteFolders.add(normalize(folder));
    }

    /**
     * fsyncs of files under {@code folder}, and of the folder and those below it, fail with EIO
     * from now on, each losing the file's writes since its last good fsync.
     */
    public void failForces(Path folder) {
        failingForceFolders.add(normalize(folder));
    }

    /** Writes and fsyncs failed with EIO so far (deletions are {@link #failedDeletes}). */
    public int ioErrors() {
        return ioErrors.get();
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

    @Override
    public void syncDirectory(Path dir) throws IOException {
        failIfUnder(failingForceFolders, dir);
        FileIO.REAL.syncDirectory(dir);
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
        return isUnder(fullFolders, path);
    }

    private void failIfUnder(Set<Path> folders, Path path) throws IOException {
        if (isUnder(folders, path)) {
            ioErrors.incrementAndGet();
            throw new IOException("Input/output error: " + path);
        }
    }

    private static boolean isUnder(Set<Path> folders, Path path) {
        if (folders.isEmpty()) {
            return false;
        }
        Path p = normalize(path);
        for (Path folder : folders) {
            if (p.startsWith(folder)) {
                return true;
            }
        }
        return false;
    }

    private static Path normalize(Path path) {
        return path.toAbsolutePath().normalize();
    }

    /**
     * A real channel whose writes fail once its disk, or its folder, is full or failing, and whose
     * fsyncs fail once its folder's do. It notes the byte range written since the last good fsync,
     * which a failed one loses.
     */
    private final class Channel extends ForwardingFileChannel {
        private final Path path;
        /** The file's size at the last good fsync (or at the open: what was there counts as durable). */
        private long forcedSize;
        /** Written since the last good fsync: [dirtyFrom, dirtyTo), empty when dirtyFrom >= dirtyTo. */
        private long dirtyFrom = Long.MAX_VALUE;
        private long dirtyTo;

        Channel(Path path, FileChannel real) throws IOException {
            super(real);
            this.path = path;
            this.forcedSize = real.size();
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            beforeWrite();
            long at = real.position(); // the file's end for a channel in append mode
            return noted(at, real.write(src));
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            beforeWrite();
            long at = real.position();
            return noted(at, real.write(srcs, offset, length));
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            beforeWrite();
            return noted(position, real.write(src, position));
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            beforeWrite();
            return noted(position, real.transferFrom(src, position, count));
        }

        @Override
        public void force(boolean metaData) throws IOException {
            if (isUnder(failingForceFolders, path)) {
                loseUnforcedWrites();
                failIfUnder(failingForceFolders, path);
            }
            // What this force covers is what was written before it began; writes that land while
            // it runs (the broker appends while another thread forces) stay unforced.
            long size;
            long coveredFrom;
            long coveredTo;
            synchronized (this) {
                size = real.size();
                coveredFrom = dirtyFrom;
                coveredTo = dirtyTo;
                dirtyFrom = Long.MAX_VALUE;
                dirtyTo = 0;
            }
            try {
                real.force(metaData);
            } catch (IOException | RuntimeException e) {
                noted(coveredFrom, coveredTo - coveredFrom);
                throw e;
            }
            synchronized (this) {
                forcedSize = size;
            }
        }

        private void beforeWrite() throws IOException {
            refuseIfFull(path);
            failIfUnder(failingWriteFolders, path);
        }

        private synchronized int noted(long at, int written) {
            return (int) noted(at, (long) written);
        }

        private synchronized long noted(long at, long written) {
            if (written > 0) {
                dirtyFrom = Math.min(dirtyFrom, at);
                dirtyTo = Math.max(dirtyTo, at + written);
            }
            return written;
        }

        /**
         * The file as it was at its last good fsync: cut back to that size, and zeros over what was
         * written inside it since (preallocated state logs write into zeros they already have).
         * Done through a channel of its own, since this one may be in append mode, where a
         * positional write would land at the end.
         */
        private synchronized void loseUnforcedWrites() throws IOException {
            if (dirtyFrom >= dirtyTo) {
                return;
            }
            try (FileChannel raw = FileChannel.open(path, StandardOpenOption.WRITE)) {
                long keep = Math.max(forcedSize, dirtyFrom);
                if (raw.size() > keep) {
                    raw.truncate(keep);
                }
                long zerosTo = Math.min(Math.min(dirtyTo, keep), raw.size());
                ByteBuffer zeros = ByteBuffer.allocate(64 * 1024);
                for (long at = dirtyFrom; at < zerosTo; ) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), zerosTo - at));
                    at += raw.write(zeros, at);
                }
            }
            dirtyFrom = Long.MAX_VALUE;
            dirtyTo = 0;
        }
    }
}
