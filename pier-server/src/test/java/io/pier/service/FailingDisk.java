package io.pier.service;

import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link FileIO} over real files where one folder of the data folder can be made to fail: from
 * {@link #fail(Path)} on, every write to a segment file under that folder, and every new segment
 * file there, fails as {@code ENOSPC} does, before a byte is written. Reads, forces and truncations
 * go on working, and so does every other folder: one store's log fails while the rest of the
 * broker still serves, which is the window between a storage fault and the end of the shutdown it
 * causes.
 */
public final class FailingDisk implements FileIO {
    private final Set<Path> failing = ConcurrentHashMap.newKeySet();

    /** Writes under {@code folder} fail from now on. */
    public void fail(Path folder) {
        failing.add(folder.toAbsolutePath().normalize());
    }

    private void refuseIfFailing(Path path) throws IOException {
        Path p = path.toAbsolutePath().normalize();
        for (Path f : failing) {
            if (p.startsWith(f)) {
                throw new IOException("No space left on device");
            }
        }
    }

    @Override
    public FileChannel open(Path path, boolean create) throws IOException {
        if (create) {
            refuseIfFailing(path);
        }
        return new Channel(path, FileIO.REAL.open(path, create));
    }

    /** A real channel whose writes fail once its folder fails. */
    private final class Channel extends FileChannel {
        private final Path path;
        private final FileChannel real;

        Channel(Path path, FileChannel real) {
            this.path = path;
            this.real = real;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return real.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return real.read(dsts, offset, length);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return real.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            refuseIfFailing(path);
            return real.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            refuseIfFailing(path);
            return real.write(srcs, offset, length);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            refuseIfFailing(path);
            return real.write(src, position);
        }

        @Override
        public long position() throws IOException {
            return real.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            real.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return real.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            real.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            real.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return real.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            refuseIfFailing(path);
            return real.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return real.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return real.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return real.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            real.close();
        }
    }
}
