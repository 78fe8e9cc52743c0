package io.pier.state;

import io.pier.common.Agent;
import io.pier.common.Clock;
import io.pier.common.Wakeup;
import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link SharePersister} that keeps share-partition state, and which share groups exist, in a
 * {@link ShareStateLog} (on a broker: {@link LocalShareStateLog}, Pier's own partition log in
 * DURABLE mode). It is an {@link Agent} with no thread of its own: whoever runs it (the broker's
 * {@code AgentRunner}, or a test by hand) calls {@link #doWork} with the time. Record format: see
 * {@link ShareStateRecords} (and {@code docs/share-state-format.md}).
 *
 * <pre>
 *   callers (any thread)                 doWork(nowMs), on the runner's thread
 *   write / initialize / delete  --&gt;     queue --&gt; take up to 4096 submissions
 *   recordGroup / deleteGroup            validate (initialised? state epoch fenced?) and merge
 *     (each submission wakes the runner)   (StateBatchCombiner) per key
 *                                        encode: ShareUpdate, or ShareSnapshot every N updates
 *                                        once nowMs reaches nextDeadlineMs(): snapshot cold keys
 *                                          too, ahead of the cycle's own records
 *                                        ShareStateLog: append, then ONE flush (group commit)
 *                                        publish the new states, complete the futures
 *                                        after a cold pass: move the log start to
 *                                          min(latest full record of each key)
 * </pre>
 *
 * <p><b>Threading.</b> Everything but two parts is owned by the thread that calls {@link #doWork}
 * (one at a time, never concurrently) and touched nowhere else: the log, the staging, the
 * {@link SnapshotPolicy}. The two parts other threads meet: the submission queue (a JDK concurrent
 * queue; each submission calls the injected {@link Wakeup}) and the published view, one immutable
 * {@link ShareState} per key in a concurrent map that only the duty cycle writes, after the flush.
 * So {@link #read}, {@link #keys} and {@link #groups} are safe from any thread and never show state
 * that is not durable. Futures complete on the duty-cycle thread (callers hop back to their own).
 * Time comes only from the {@code nowMs} handed to {@code doWork}; nothing here reads a clock,
 * sleeps or locks.
 *
 * <p><b>Failure.</b> An I/O error from the log is fatal (fsyncgate): every pending and later change
 * fails, the {@link FatalHandler} is told once, and nothing more is written. On the next start the
 * log's recovery drops a torn tail and refuses damage inside the synced region, naming where.
 *
 * <p><b>Recovery.</b> {@link #open} replays the log from its start offset: a snapshot replaces a
 * key's state, an update is merged into it, a null value deletes it (see {@link ShareStateReplay}).
 *
 * <p>This class says what the share state's submissions and records mean; the duty cycle, the
 * group commit, the failure and the close are {@link DurableStoreAgent}'s, when a key is written
 * whole and how far the log start may move is {@link SnapshotPolicy}'s decision, where the bytes go
 * is the {@link ShareStateLog}'s.
 */
public final class DurableSharePersister
        extends DurableStoreAgent<DurableSharePersister.Op, ShareStateChanges.Staged> implements ShareStateStore {
    private static final Wording WORDING = new Wording("share-state", "share state is not writable after an I/O error",
            "share-state persister is closed", "no further share state is written");

    /**
     * @param updatesPerSnapshot {@code share.coordinator.snapshot.update.records.per.snapshot}:
     *     a key's state is written whole instead of as an update once it has this many updates
     * @param coldSnapshotIntervalMs {@code share.coordinator.cold.partition.snapshot.interval.ms}:
     *     how often keys without a recent snapshot are snapshotted so the log start can move on
     * @param segmentBytes segment size of the local state log; whole segments below the start are
     *     deleted
     */
    public record Options(int updatesPerSnapshot, long coldSnapshotIntervalMs, long segmentBytes) {
        public static final Options DEFAULTS = new Options(500, 300_000, 16L * 1024 * 1024);

        public Options {
            if (updatesPerSnapshot < 1 || coldSnapshotIntervalMs < 1 || segmentBytes < 1024) {
                throw new IllegalArgumentException("bad share-state options");
            }
        }

        /** Reads the Kafka names, falling back to {@link #DEFAULTS}. */
        public static Options fromProperties(Map<String, String> props) {
            return new Options(
                    Integer.parseInt(props.getOrDefault("share.coordinator.snapshot.update.records.per.snapshot",
                            String.valueOf(DEFAULTS.updatesPerSnapshot))),
                    Long.parseLong(props.getOrDefault("share.coordinator.cold.partition.snapshot.interval.ms",
                            String.valueOf(DEFAULTS.coldSnapshotIntervalMs))),
                    Long.parseLong(props.getOrDefault("pier.share.state.segment.bytes",
                            String.valueOf(DEFAULTS.segmentBytes))));
        }
    }

    /** Told once when the state log cannot be written or forced; the owner must stop. */
    public interface FatalHandler {
        void onFatal(String what, Throwable cause);
    }

    /** What a caller submitted (package-private only because the base class names it). */
    sealed interface Op extends Submission permits WriteOp, InitOp, DeleteOp, GroupOp, CompactOp {}

    private record WriteOp(ShareStateWrite write, CompletableFuture<Void> done) implements Op {}

    private record InitOp(SharePartitionKey key, long startOffset, CompletableFuture<Void> done) implements Op {}

    private record DeleteOp(SharePartitionKey key, CompletableFuture<Void> done) implements Op {}

    private record GroupOp(String groupId, boolean exists, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    // Met by other threads: the published view, which only the duty cycle writes, after the flush.
    private final Map<SharePartitionKey, ShareState> published = new ConcurrentHashMap<>();
    private final Set<String> publishedGroups = ConcurrentHashMap.newKeySet();
    // Owned by the duty cycle.
    private final SnapshotPolicy snapshots;

    private DurableSharePersister(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal) {
        super(log, new SnapshotPolicy(options.updatesPerSnapshot()), options.coldSnapshotIntervalMs(), wakeup,
                fatal::onFatal, WORDING);
        this.snapshots = policy();
    }

    /**
     * Replays {@code log} and returns a persister over it, ready for its first duty cycle. On
     * failure the log is closed.
     *
     * @param wakeup called after every submission, from the submitting thread
     * @throws IOException if the log cannot be read or holds a record that does not decode (the
     *     message names the log and offset)
     */
    public static DurableSharePersister open(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal)
            throws IOException {
        DurableSharePersister p = new DurableSharePersister(log, options, wakeup, fatal);
        p.recover(() -> ShareStateReplay.replay(log, p.published, p.publishedGroups, p.snapshots));
        return p;
    }

    /**
     * Opens (creating if needed) a {@link LocalShareStateLog} in {@code dir} and replays it.
     *
     * @param clock for the local log only (record timestamps, its recovery bookkeeping)
     * @throws IOException if the log cannot be read, is damaged inside its synced region, or holds
     *     a record that does not decode (the message names the file and offset)
     */
    public static DurableSharePersister open(Path dir, Options options, Clock clock, FileIO io, Wakeup wakeup,
            FatalHandler fatal) throws IOException {
        return open(LocalShareStateLog.open(dir, options.segmentBytes(), clock, io), options, wakeup, fatal);
    }

    // ---------------------------------------------------------------- SharePersister, any thread

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        return submit(new WriteOp(write, new CompletableFuture<>()));
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        return published.get(key);
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        return submit(new InitOp(key, startOffset, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        return submit(new DeleteOp(key, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> recordGroup(String groupId) {
        if (publishedGroups.contains(groupId)) {
            return CompletableFuture.completedFuture(null);
        }
        return submit(new GroupOp(groupId, true, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> deleteGroup(String groupId) {
        return submit(new GroupOp(groupId, false, new CompletableFuture<>()));
    }

    /** Runs a cold pass in the next duty cycle, whatever the time; for tests and measurements. */
    public CompletableFuture<Void> compactNow() {
        return submit(new CompactOp(new CompletableFuture<>()));
    }

    @Override
    public Set<String> groups() {
        return Collections.unmodifiableSet(publishedGroups);
    }

    @Override
    public Set<SharePartitionKey> keys() {
        return Set.copyOf(published.keySet());
    }

    /** Every share-partition with durable state (a copy). */
    public Map<SharePartitionKey, ShareState> states() {
        return Map.copyOf(published);
    }

    /** Group commits (flushes of the state log) since open. */
    public long flushes() {
        return flushCount();
    }

    // ---------------------------------------------------------------- the duty-cycle thread

    @Override
    public String roleName() {
        return "pier-share-state";
    }

    @Override
    boolean forcesPass(Op op) {
        return op instanceof CompactOp;
    }

    /** A share-partition's published state as a snapshot, or a group's existence. */
    @Override
    ShareStateChanges.Staged rewrite(Object coldKey) {
        if (coldKey instanceof SharePartitionKey spk) {
            ShareState s = published.get(spk);
            return s == null ? null : ShareStateChanges.Staged.snapshot(spk, s);
        } else if (coldKey instanceof String group) {
            return ShareStateChanges.Staged.groupExists(group);
        }
        return null;
    }

    @Override
    Staging<ShareStateChanges.Staged> stage(List<Op> ops) {
        return new Changes(ops);
    }

    @Override
    ShareStateLog.Entry entry(ShareStateChanges.Staged record) {
        return record.entry();
    }

    @Override
    void appended(ShareStateChanges.Staged p, long offset) {
        if (p.entry().value() == null) {
            snapshots.onDeleted(p.infoKey());
        } else if (p.full()) {
            snapshots.onFullRecord(p.infoKey(), offset);
        } else {
            snapshots.onUpdate(p.infoKey());
        }
    }

    /**
     * One cycle's changes, validated and merged per key by {@link ShareStateChanges}; a refused
     * change fails at once. Compaction requests complete last, once their pass has run.
     */
    private final class Changes implements Staging<ShareStateChanges.Staged> {
        private final ShareStateChanges changes = new ShareStateChanges(published, publishedGroups, snapshots);
        private final List<CompletableFuture<Void>> succeeded = new ArrayList<>();
        private final List<CompactOp> compactions = new ArrayList<>();

        Changes(List<Op> ops) {
            for (Op op : ops) {
                if (op instanceof CompactOp c) {
                    compactions.add(c);
                    continue;
                }
                RuntimeException refused = stageChange(op);
                if (refused != null) {
                    op.done().completeExceptionally(refused);
                } else {
                    succeeded.add(op.done());
                }
            }
        }

        /** Returns why the op was refused, or null once it is staged (or needs no record at all). */
        private RuntimeException stageChange(Op op) {
            if (op instanceof WriteOp w) {
                return changes.write(w.write());
            } else if (op instanceof InitOp i) {
                changes.initialize(i.key(), i.startOffset());
            } else if (op instanceof DeleteOp d) {
                changes.delete(d.key());
            } else if (op instanceof GroupOp g) {
                changes.group(g.groupId(), g.exists());
            }
            return null;
        }

        @Override
        public List<ShareStateChanges.Staged> records() {
            return changes.records();
        }

        @Override
        public void durable() {
            changes.publish();
            for (CompletableFuture<Void> f : succeeded) {
                f.complete(null);
            }
        }

        @Override
        public void notDurable(Throwable cause) {
            for (CompletableFuture<Void> f : succeeded) {
                f.completeExceptionally(new IOException("share state could not be made durable", cause));
            }
        }

        @Override
        public void ended(Throwable failure) {
            for (CompactOp c : compactions) {
                if (failure == null) {
                    c.done().complete(null);
                } else {
                    c.done().completeExceptionally(new IOException("share-state log failed", failure));
                }
            }
        }
    }
}
