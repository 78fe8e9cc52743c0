package io.pier.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link FileIO} for crash tests that simulates power loss. Each channel keeps the bytes written
 * since its last {@code force} in memory, apart from the file; {@code force} writes them through
 * and forces the real file. {@link #powerLoss} then discards every unsynced byte, optionally
 * keeping a random prefix of it (a torn write), and makes every channel refuse further use, as if
 * the machine had stopped. Reopening the files afterwards shows exactly what a real disk would
 * have kept if each fsync was honoured and nothing else was.
 *
 * <p>Directory operations (create, delete, rename) happen at once and are never lost: Pier fsyncs
 * the directory after each of them, before anything depends on it.
 *
 * <p>{@link #arm} makes the n-th arrival at a {@link CrashPoint} throw {@link SimulatedCrash} and
 * stops all I/O, so the test can then call {@link #powerLoss}.
 *
 * <p>Thread-safe (an agent runner's thread and a test thread may share one instance). Lock order:
 * this object, then a channel; a channel never takes this object's lock.
 */
public final class PowerLossFileIO implements FileIO {
    private final List<Channel> open = new ArrayList<>();
    private final Map<CrashPoint, Integer> armed = new EnumMap<>(CrashPoint.class);
    private volatile boolean crashed;
    private final AtomicLong syncs = new AtomicLong();

    /** Thrown at an armed crash point, and by every I/O after the crash. */
    public static final class SimulatedCrash extends IOException {
        private static final long serialVersionUID = 1L;

        public SimulatedCrash(String message) {
            super(message);
        }
    }

    @Override
    public synchronized FileChannel open(Path path, boolean create) throws IOException {
        checkAlive();
        Channel ch = new Channel(this, FileIO.REAL.open(path, create));
        open.add(ch);
        return ch;
    }

    @Override
    public synchronized void crashPoint(CrashPoint point) throws IOException {
        checkAlive();
        Integer left = armed.get(point);
        if (left == null) {
            return;
        }
        if (left > 1) {
            armed.put(point, left - 1);
            return;
        }
        armed.remove(point);
        crashed = true;
        throw new SimulatedCrash("simulated crash at " + point);
    }

    /** Crashes on the {@code nth} (1-based) arrival at {@code point}. */
    public synchronized void arm(CrashPoint point, int nth) {
        if (nth < 1) {
            throw new IllegalArgumentException("nth must be >= 1: " + nth);
        }
        armed.put(point, nth);
    }

    public boolean crashed() {
        return crashed;
    }

    /** Forces honoured so far. */
    public long syncs() {
        return syncs.get();
    }

    /**
     * The power goes out: every channel loses what was written since its last force. With
     * {@code random} non-null, each channel with unsynced bytes keeps a random prefix of them
     * (possibly empty, possibly all), as a disk may have written part of the last request.
     *
     * @return the number of unsynced bytes dropped
     */
    public synchronized long powerLoss(Random random) throws IOException {
        crashed = true;
        long dropped = 0;
        for (Channel ch : open) {
            dropped += ch.loseUnsynced(random);
        }
        open.clear();
        return dropped;
    }

    // Channels never take this object's lock (powerLoss holds it while taking theirs).
    private void checkAlive() throws SimulatedCrash {
        if (crashed) {
            throw new SimulatedCrash("the simulated machine is down");
        }
    }

    private void countSync() {
        syncs.incrementAndGet();
    }

    /**
     * One file: {@code disk} holds the synced bytes; {@code pending} the logical content from
     * {@code pendingFrom} to {@code size}, written since the last force.
     */
    private static final class Channel extends FileChannel {
        private final PowerLossFileIO owner;
        private final FileChannel disk;
        private long size;
        private long pendingFrom;
        private byte[] pending = new byte[0];
        private long position;

        Channel(PowerLossFileIO owner, FileChannel disk) throws IOException {
            this.owner = owner;
            this.disk = disk;
            this.size = disk.size();
            this.pendingFrom = size;
        }

        private int pendingLength() {
            return (int) (size - pendingFrom);
        }

        @Override
        public synchronized int read(ByteBuffer dst) throws IOException {
            int n = read(dst, position);
            if (n > 0) {
                position += n;
            }
            return n;
        }

        @Override
        public synchronized int read(ByteBuffer dst, long at) throws IOException {
            owner.checkAlive();
            if (at >= size) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), size - at);
            int done = 0;
            while (done < n) {
                long p = at + done;
                if (p < pendingFrom) {
                    int chunk = (int) Math.min(n - done, pendingFrom - p);
                    ByteBuffer view = dst.duplicate();
                    view.limit(view.position() + chunk);
                    int r = disk.read(view, p);
                    if (r <= 0) {
                        throw new IOException("short read of synced data at " + p);
                    }
                    dst.position(dst.position() + r);
                    done += r;
                } else {
                    int chunk = n - done;
                    dst.put(pending, (int) (p - pendingFrom), chunk);
                    done += chunk;
                }
            }
            return n;
        }

        @Override
        public synchronized long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int n = read(dsts[i]);
                if (n < 0) {
                    return total == 0 ? -1 : total;
                }
                total += n;
            }
            return total;
        }

        @Override
        public synchronized int write(ByteBuffer src) throws IOException {
            int n = write(src, position);
            position += n;
            return n;
        }

        @Override
        public synchronized int write(ByteBuffer src, long at) throws IOException {
            owner.checkAlive();
            int n = src.remaining();
            long end = at + n;
            if (at < pendingFrom) {
                // Rewriting synced bytes: pull them into the pending region first.
                long from = Math.min(at, size);
                byte[] grown = new byte[(int) (size - from)];
                ByteBuffer head = ByteBuffer.wrap(grown, 0, (int) (Math.min(pendingFrom, size) - from));
                while (head.hasRemaining()) {
                    if (disk.read(head, from + head.position()) < 0) {
                        break;
                    }
                }
                System.arraycopy(pending, 0, grown, (int) (pendingFrom - from), pendingLength());
                pending = grown;
                pendingFrom = from;
            }
            if (end > size) {
                pending = Arrays.copyOf(pending, (int) (end - pendingFrom));
                size = end;
            }
            src.get(pending, (int) (at - pendingFrom), n);
            return n;
        }

        @Override
        public synchronized long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                total += write(srcs[i]);
            }
            return total;
        }

        @Override
        public synchronized long position() {
            return position;
        }

        @Override
        public synchronized FileChannel position(long newPosition) {
            position = newPosition;
            return this;
        }

        @Override
        public synchronized long size() throws IOException {
            owner.checkAlive();
            return size;
        }

        @Override
        public synchronized FileChannel truncate(long newSize) throws IOException {
            owner.checkAlive();
            if (newSize < size) {
                if (newSize < pendingFrom) {
                    // Only recovery cuts synced data, and forces right after: apply it to the disk.
                    disk.truncate(newSize);
                    pending = new byte[0];
                    pendingFrom = newSize;
                } else {
                    pending = Arrays.copyOf(pending, (int) (newSize - pendingFrom));
                }
                size = newSize;
            }
            position = Math.min(position, size);
            return this;
        }

        @Override
        public synchronized void force(boolean metaData) throws IOException {
            owner.checkAlive();
            writeThrough();
            disk.force(metaData);
            pending = new byte[0];
            pendingFrom = size;
            owner.countSync();
        }

        /** Puts the unsynced bytes (and a truncation) on the real file; the caller holds the lock. */
        private void writeThrough() throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(pending);
            long at = pendingFrom;
            while (buf.hasRemaining()) {
                at += disk.write(buf, at);
            }
            if (disk.size() > size) {
                disk.truncate(size);
            }
        }

        synchronized long loseUnsynced(Random random) throws IOException {
            if (!disk.isOpen()) {
                return 0;
            }
            int lost = pendingLength();
            if (random != null && lost > 0 && pendingFrom >= disk.size()) {
                int keep = random.nextInt(lost + 1);
                disk.write(ByteBuffer.wrap(pending, 0, keep), pendingFrom);
                lost -= keep;
            }
            pending = new byte[0];
            disk.close();
            return lost;
        }

        @Override
        public synchronized long transferTo(long at, long count, WritableByteChannel target) throws IOException {
            ByteBuffer buf = ByteBuffer.allocate((int) Math.min(count, Math.max(0, size - at)));
            read(buf, at);
            buf.flip();
            return target.write(buf);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long at, long count) {
            throw new UnsupportedOperationException("transferFrom");
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long at, long count) {
            throw new UnsupportedOperationException("map");
        }

        @Override
        public FileLock lock(long at, long count, boolean shared) {
            throw new UnsupportedOperationException("lock");
        }

        @Override
        public FileLock tryLock(long at, long count, boolean shared) {
            throw new UnsupportedOperationException("tryLock");
        }

        @Override
        protected void implCloseChannel() throws IOException {
            synchronized (this) {
                if (disk.isOpen()) {
                    // Closing does not sync; the simplification is that closed files keep what was
                    // written (the log forces before a clean close; deleted files do not matter).
                    if (!owner.crashed()) {
                        writeThrough();
                    }
                    pending = new byte[0];
                    pendingFrom = size;
                    disk.close();
                }
            }
        }
    }
}
