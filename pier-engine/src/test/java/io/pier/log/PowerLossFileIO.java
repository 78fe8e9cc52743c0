package io.pier.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * A {@link FileIO} for crash tests that simulates power loss, for file contents and for directory
 * entries.
 *
 * <p><b>Contents.</b> Each channel keeps the bytes written since its last {@code force} in memory,
 * apart from the file; {@code force} writes them through and forces the real file.
 *
 * <p><b>Directory entries.</b> Creating a file or a directory, renaming and deleting change the
 * real files at once (so reads see them), and are noted, oldest first, until an fsync of their
 * directory ({@link #syncDirectory}) makes them durable. A deleted file, and a file a rename
 * replaces, are moved aside to a graveyard folder rather than removed, so that a power loss can
 * bring them back.
 *
 * <p>{@link #powerLoss} then discards every unsynced byte, optionally keeping a random prefix of
 * each file's (a torn write), and undoes directory changes not made durable: of each directory's
 * unsynced changes a random prefix survives (none without a {@code Random}), as a journal keeps a
 * prefix of what it was given; the rest are undone newest first, so a new file vanishes, a rename
 * reverts and a deleted file comes back. A change inside a directory that no longer exists stays
 * as it is: its directory took it along. Every channel then refuses further use, as if the machine
 * had stopped. Reopening the files afterwards shows what a real disk could have kept if each fsync
 * was honoured and nothing else was.
 *
 * <p>Simplifications: a channel closed before the power loss keeps what was written to it (the log
 * forces before a clean close; index files, the only other files closed unforced, are never read
 * back); emptying a file ({@link #openEmpty}) is at once durable; a rename must stay within its
 * directory (every rename Pier makes does).
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
    /** Directory changes no fsync of their directory has made durable yet, oldest first. */
    private final List<EntryChange> unsynced = new ArrayList<>();
    private volatile boolean crashed;
    private final AtomicLong syncs = new AtomicLong();
    private long entriesUndone;
    private final List<String> undoneAtLastPowerLoss = new ArrayList<>();
    /** Where deleted and replaced files wait, in case a power loss brings them back; created on first use. */
    private Path graveyard;
    /** The folder the graveyard is made in; null for the system's temp folder. */
    private final Path graveyardParent;
    private long graves;

    /** A simulated disk whose graveyard goes in the system's temp folder. */
    public PowerLossFileIO() {
        this(null);
    }

    /**
     * A simulated disk whose graveyard goes in {@code graveyardParent}, a folder the test cleans up
     * (a graveyard still holding files when the test ends, with no power loss to empty it, stays).
     * On the data folder's file system, deleting a file is a rename.
     */
    public PowerLossFileIO(Path graveyardParent) {
        this.graveyardParent = graveyardParent;
    }

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
        if (create) {
            unsynced.add(new Created(abs(path)));
        }
        return ch;
    }

    @Override
    public synchronized FileChannel openEmpty(Path path) throws IOException {
        Channel ch = openReadWrite(path);
        ch.truncate(0);
        return ch;
    }

    @Override
    public synchronized FileChannel openAppend(Path path) throws IOException {
        Channel ch = openReadWrite(path);
        ch.position(ch.size());
        return ch;
    }

    /** Opens {@code path} for reading and writing, creating it (a new entry) if missing. */
    private Channel openReadWrite(Path path) throws IOException {
        checkAlive();
        boolean existed = Files.exists(path);
        Channel ch = new Channel(this, FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE));
        open.add(ch);
        if (!existed) {
            unsynced.add(new Created(abs(path)));
        }
        return ch;
    }

    @Override
    public synchronized void createDirectories(Path dir) throws IOException {
        checkAlive();
        List<Path> missing = new ArrayList<>();
        for (Path p = abs(dir); p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.add(0, p);
        }
        for (Path p : missing) {
            Files.createDirectory(p);
            unsynced.add(new Created(p));
        }
    }

    @Override
    public synchronized void move(Path source, Path target) throws IOException {
        checkAlive();
        Path from = abs(source);
        Path to = abs(target);
        if (!from.getParent().equals(to.getParent())) {
            throw new IOException("the simulated disk renames only within a directory: " + from + " -> " + to);
        }
        if (Files.isDirectory(to)) {
            throw new IOException("the simulated disk does not replace a directory: " + to);
        }
        if (!Files.exists(from)) {
            throw new NoSuchFileException(from.toString()); // before the target is moved aside
        }
        Path displaced = Files.exists(to) ? bury(to) : null;
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        unsynced.add(new Renamed(from, to, displaced));
    }

    @Override
    public synchronized boolean deleteIfExists(Path path) throws IOException {
        checkAlive();
        Path p = abs(path);
        if (!Files.exists(p)) {
            return false;
        }
        if (Files.isDirectory(p)) {
            Files.delete(p); // only an empty one, as the real call
            unsynced.add(new Deleted(p, null));
        } else {
            unsynced.add(new Deleted(p, bury(p)));
        }
        return true;
    }

    @Override
    public synchronized void syncDirectory(Path dir) throws IOException {
        checkAlive();
        FileIO.REAL.syncDirectory(dir);
        Path d = abs(dir);
        for (var it = unsynced.iterator(); it.hasNext();) {
            EntryChange c = it.next();
            if (c.directory().equals(d)) {
                c.discardBackup();
                it.remove();
            }
        }
        if (graveyard != null && unsynced.stream().noneMatch(EntryChange::hasBackup)) {
            deleteTree(graveyard); // nothing left to bring back: no folder left behind after a clean stop
            graveyard = null;
        }
        countSync();
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

    /** Forces honoured so far, of files and of directories. */
    public long syncs() {
        return syncs.get();
    }

    /** Directory changes (a created, renamed or deleted entry) that power losses have undone so far. */
    public synchronized long entriesUndone() {
        return entriesUndone;
    }

    /** The directory changes the last power loss undid, newest first, for a test to report. */
    public synchronized List<String> undoneAtLastPowerLoss() {
        return List.copyOf(undoneAtLastPowerLoss);
    }

    /**
     * The power goes out: every channel loses what was written since its last force, and every
     * directory loses the entry changes after a prefix of those not yet fsynced. With
     * {@code random} non-null, each channel with unsynced bytes keeps a random prefix of them
     * (possibly empty, possibly all), as a disk may have written part of the last request, and
     * each directory keeps a random prefix of its unsynced changes; with null, nothing unsynced
     * survives.
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
        Map<Path, Integer> survivors = new HashMap<>();
        Map<Path, Integer> seen = new HashMap<>();
        for (EntryChange c : unsynced) {
            survivors.computeIfAbsent(c.directory(), d -> random == null ? 0
                    : random.nextInt(1 + (int) unsynced.stream().filter(x -> x.directory().equals(d)).count()));
        }
        boolean[] lost = new boolean[unsynced.size()];
        for (int i = 0; i < unsynced.size(); i++) {
            Path d = unsynced.get(i).directory();
            lost[i] = seen.merge(d, 1, Integer::sum) > survivors.get(d);
        }
        for (int i = unsynced.size() - 1; i >= 0; i--) {
            EntryChange c = unsynced.get(i);
            if (lost[i] && Files.isDirectory(c.directory())) {
                c.undo();
                entriesUndone++;
                undoneAtLastPowerLoss.add(c.toString());
            }
        }
        for (EntryChange c : unsynced) {
            c.discardBackup();
        }
        unsynced.clear();
        if (graveyard != null) {
            deleteTree(graveyard);
            graveyard = null;
        }
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

    private static Path abs(Path p) {
        return p.toAbsolutePath().normalize();
    }

    /** Moves the file {@code p} to the graveyard; returns where it went. */
    private Path bury(Path p) throws IOException {
        if (graveyard == null) {
            graveyard = graveyardParent == null ? Files.createTempDirectory("pier-powerloss-graveyard-")
                    : Files.createTempDirectory(graveyardParent, "graveyard-");
        }
        Path grave = graveyard.resolve(Long.toString(graves++));
        Files.move(p, grave);
        return grave;
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** One change of a directory entry, and how a power loss undoes it. */
    private sealed interface EntryChange permits Created, Renamed, Deleted {
        /** The directory whose fsync makes the change durable. */
        Path directory();

        /** Puts the entry back as it was before the change. */
        void undo() throws IOException;

        /** The change is durable, or undone: what was kept aside for it can go. */
        default void discardBackup() throws IOException {}

        /** True while a file is kept aside for the change. */
        default boolean hasBackup() {
            return false;
        }
    }

    /** A new file or directory: undone, it vanishes with whatever it holds. */
    private record Created(Path path) implements EntryChange {
        @Override
        public Path directory() {
            return path.getParent();
        }

        @Override
        public void undo() throws IOException {
            deleteTree(path);
        }
    }

    /** {@code from} renamed to {@code to}, which held the file now at {@code displaced} (or nothing). */
    private record Renamed(Path from, Path to, Path displaced) implements EntryChange {
        @Override
        public Path directory() {
            return to.getParent();
        }

        @Override
        public void undo() throws IOException {
            if (Files.exists(to)) {
                Files.move(to, from, StandardCopyOption.REPLACE_EXISTING);
            }
            if (displaced != null) {
                Files.move(displaced, to, StandardCopyOption.REPLACE_EXISTING);
            }
        }

        @Override
        public void discardBackup() throws IOException {
            if (displaced != null) {
                Files.deleteIfExists(displaced);
            }
        }

        @Override
        public boolean hasBackup() {
            return displaced != null;
        }
    }

    /** A deleted file, kept at {@code backup}, or a deleted empty directory ({@code backup} null). */
    private record Deleted(Path path, Path backup) implements EntryChange {
        @Override
        public Path directory() {
            return path.getParent();
        }

        @Override
        public void undo() throws IOException {
            if (backup == null) {
                Files.createDirectories(path);
            } else {
                Files.move(backup, path, StandardCopyOption.REPLACE_EXISTING);
            }
        }

        @Override
        public void discardBackup() throws IOException {
            if (backup != null) {
                Files.deleteIfExists(backup);
            }
        }

        @Override
        public boolean hasBackup() {
            return backup != null;
        }
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
