package io.pier.state;

import io.pier.common.Agent;
import io.pier.common.Clock;
import io.pier.common.Wakeup;
import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link OffsetStore} of a broker: committed offsets in a {@link ShareStateLog} (on a broker a
 * {@link LocalShareStateLog} under {@code <data>/consumer-offsets}, CRC-checked, fdatasync'd),
 * written by an {@link Agent} with group commit. Record format: {@link OffsetRecords}.
 *
 * <pre>
 *   callers (any thread)               doWork(nowMs), on the runner's thread
 *   commit / delete / deleteGroup --&gt;  queue --&gt; take up to 4096 submissions
 *   expire / retainTopics / compactNow   apply them to a copy of the touched groups
 *     (each submission wakes the runner) one record per changed key (a value, or a tombstone)
 *                                        once a compaction pass is due and the log has more
 *                                          than one segment: rewrite keys whose latest record
 *                                          is older than the previous pass's end, first
 *                                        append, then ONE flush; publish; complete the futures
 *                                        after a pass: move the log start to the oldest latest
 *                                          record of any live key (whole segments below go)
 * </pre>
 *
 * <p><b>Threading.</b> The log, the staging and the {@link SnapshotPolicy} belong to the thread
 * that runs {@link #doWork} (one at a time). Other threads meet only the submission queue and the
 * published view: one immutable map per group in a concurrent map, replaced after the flush, so
 * {@link #offsets} never shows what is not durable. Nothing here reads a clock, sleeps or locks.
 *
 * <p><b>Failure.</b> An I/O error is fatal (fsyncgate): the {@link FatalHandler} is told once and
 * every pending and later change fails. On the next start the log's recovery drops a torn tail and
 * refuses damage inside the synced region, naming where.
 *
 * <p><b>Recovery.</b> {@link #open} replays the log from its start: a value replaces its key's
 * offset, a null value removes it.
 *
 * <p>This class says what the committed offsets' submissions and records mean; the duty cycle, the
 * group commit, the failure and the close are {@link DurableStoreAgent}'s.
 */
public final class DurableOffsetStore extends DurableStoreAgent<DurableOffsetStore.Op, DurableOffsetStore.Staged>
        implements OffsetStore {
    private static final Logger LOG = LoggerFactory.getLogger(DurableOffsetStore.class);
    private static final Wording WORDING = new Wording("committed-offset",
            "committed offsets are not writable after an I/O error", "committed-offset store is closed",
            "no further offsets are written");

    /**
     * @param compactionIntervalMs how often keys whose latest record sits in old segments are
     *     rewritten, so the log start can move past them
     * @param segmentBytes segment size of the local log
     */
    public record Options(long compactionIntervalMs, long segmentBytes) {
        public static final Options DEFAULTS = new Options(300_000, 16L * 1024 * 1024);

        public Options {
            if (compactionIntervalMs < 1 || segmentBytes < 1024) {
                throw new IllegalArgumentException("bad committed-offsets options");
            }
        }

        /** {@code pier.offsets.compaction.interval.ms}, {@code pier.offsets.segment.bytes}. */
        public static Options fromProperties(Map<String, String> props) {
            return new Options(
                    Long.parseLong(props.getOrDefault("pier.offsets.compaction.interval.ms",
                            String.valueOf(DEFAULTS.compactionIntervalMs))),
                    Long.parseLong(props.getOrDefault("pier.offsets.segment.bytes",
                            String.valueOf(DEFAULTS.segmentBytes))));
        }
    }

    /** Told once when the log cannot be written or forced; the owner must stop. */
    public interface FatalHandler {
        void onFatal(String what, Throwable cause);
    }

    /** A key of the log, as the {@link SnapshotPolicy} tracks it. */
    private record OffsetKey(String groupId, TopicPartition partition) {}

    /** A pending transactional offset's key, as the {@link SnapshotPolicy} tracks it. */
    private record PendingKey(String groupId, long producerId, TopicPartition partition) {}

    /** What a caller submitted (package-private only because the base class names it). */
    sealed interface Op extends Submission
            permits CommitOp, DeleteOp, ExpireOp, RetainOp, CompactOp, PendingOp, CompletePendingOp {}

    private record PendingOp(String groupId, long producerId, Map<TopicPartition, CommittedOffset> offsets,
            CompletableFuture<Void> done) implements Op {}

    private record CompletePendingOp(String groupId, long producerId, boolean commit, CompletableFuture<Void> done)
            implements Op {}

    private record CommitOp(String groupId, Map<TopicPartition, CommittedOffset> offsets,
            CompletableFuture<Void> done) implements Op {}

    /** {@code partitions} null: the whole group. */
    private record DeleteOp(String groupId, Collection<TopicPartition> partitions, CompletableFuture<Void> done)
            implements Op {}

    /** Each of {@code unchanged}'s partitions goes only if its offset is still the one given. */
    private record ExpireOp(String groupId, Map<TopicPartition, CommittedOffset> unchanged,
            CompletableFuture<Void> done) implements Op {}

    private record RetainOp(Map<String, Uuid> liveTopics, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    private final Map<String, Map<TopicPartition, CommittedOffset>> published = new ConcurrentHashMap<>();
    /** Per group, per producer id: offsets committed inside a transaction not yet ended. */
    private final Map<String, Map<Long, Map<TopicPartition, CommittedOffset>>> publishedPending =
            new ConcurrentHashMap<>();

    private DurableOffsetStore(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal) {
        super(log, new SnapshotPolicy(Integer.MAX_VALUE), options.compactionIntervalMs(), wakeup, fatal::onFatal,
                WORDING);
    }

    /**
     * Replays {@code log} and returns a store over it. On failure the log is closed.
     *
     * @throws IOException if the log cannot be read or holds a record that does not decode
     */
    public static DurableOffsetStore open(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal)
            throws IOException {
        DurableOffsetStore s = new DurableOffsetStore(log, options, wakeup, fatal);
        s.recover(() -> s.replay(log));
        return s;
    }

    /** Opens (creating if needed) a {@link LocalShareStateLog} in {@code dir} and replays it. */
    public static DurableOffsetStore open(Path dir, Options options, Clock clock, FileIO io, Wakeup wakeup,
            FatalHandler fatal) throws IOException {
        return open(LocalShareStateLog.open(dir, options.segmentBytes(), clock, io), options, wakeup, fatal);
    }

    private void replay(ShareStateLog log) throws IOException {
        Map<String, Map<TopicPartition, CommittedOffset>> groups = new HashMap<>();
        Map<String, Map<Long, Map<TopicPartition, CommittedOffset>>> pending = new HashMap<>();
        log.replay((offset, rawKey, value) -> {
            try {
                if (OffsetRecords.keyType(rawKey) == OffsetRecords.PENDING_OFFSET) {
                    applyPending(pending, offset, rawKey, value);
                } else {
                    apply(groups, offset, rawKey, value);
                }
            } catch (RuntimeException e) {
                throw new IOException("undecodable committed-offset record at offset " + offset + " of "
                        + log.name() + ": " + e.getMessage(), e);
            }
        });
        groups.forEach((g, m) -> {
            if (!m.isEmpty()) {
                published.put(g, Map.copyOf(m));
            }
        });
        pending.forEach((g, byProducer) -> publishPending(g, byProducer));
        LOG.info("Committed offsets loaded from {}: {} groups, offsets {}..{}", log.name(), published.size(),
                log.startOffset(), log.endOffset());
    }

    private void apply(Map<String, Map<TopicPartition, CommittedOffset>> groups, long offset, ByteBuffer rawKey,
            ByteBuffer value) {
        OffsetRecords.Key key = OffsetRecords.decodeKey(rawKey);
        OffsetKey k = new OffsetKey(key.groupId(), key.partition());
        if (value == null) {
            Map<TopicPartition, CommittedOffset> m = groups.get(key.groupId());
            if (m != null) {
                m.remove(key.partition());
            }
            policy().onDeleted(k);
        } else {
            groups.computeIfAbsent(key.groupId(), g -> new HashMap<>())
                    .put(key.partition(), OffsetRecords.decodeValue(value));
            policy().onFullRecord(k, offset);
        }
    }

    private void applyPending(Map<String, Map<Long, Map<TopicPartition, CommittedOffset>>> pending, long offset,
            ByteBuffer rawKey, ByteBuffer value) {
        OffsetRecords.PendingKey key = OffsetRecords.decodePendingKey(rawKey);
        PendingKey k = new PendingKey(key.groupId(), key.producerId(), key.partition());
        Map<TopicPartition, CommittedOffset> m = pending.computeIfAbsent(key.groupId(), g -> new HashMap<>())
                .computeIfAbsent(key.producerId(), p -> new HashMap<>());
        if (value == null) {
            m.remove(key.partition());
            policy().onDeleted(k);
        } else {
            m.put(key.partition(), OffsetRecords.decodeValue(value));
            policy().onFullRecord(k, offset);
        }
    }

    /** Publishes a group's pending offsets, dropping producers (and the group) left with none. */
    private void publishPending(String groupId, Map<Long, Map<TopicPartition, CommittedOffset>> byProducer) {
        Map<Long, Map<TopicPartition, CommittedOffset>> copy = new HashMap<>();
        byProducer.forEach((pid, m) -> {
            if (!m.isEmpty()) {
                copy.put(pid, Map.copyOf(m));
            }
        });
        if (copy.isEmpty()) {
            publishedPending.remove(groupId);
        } else {
            publishedPending.put(groupId, Map.copyOf(copy));
        }
    }

    // ---------------------------------------------------------------- OffsetStore, any thread

    @Override
    public CompletableFuture<Void> commitPending(String groupId, long producerId,
            Map<TopicPartition, CommittedOffset> offsets) {
        return submit(new PendingOp(groupId, producerId, Map.copyOf(offsets), new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> completePending(String groupId, long producerId, boolean commit) {
        return submit(new CompletePendingOp(groupId, producerId, commit, new CompletableFuture<>()));
    }

    @Override
    public Map<TopicPartition, CommittedOffset> pendingOffsets(String groupId, long producerId) {
        return publishedPending.getOrDefault(groupId, Map.of()).getOrDefault(producerId, Map.of());
    }

    @Override
    public Set<TopicPartition> pendingPartitions(String groupId) {
        Set<TopicPartition> out = new HashSet<>();
        publishedPending.getOrDefault(groupId, Map.of()).values().forEach(m -> out.addAll(m.keySet()));
        return out;
    }

    @Override
    public CompletableFuture<Void> commit(String groupId, Map<TopicPartition, CommittedOffset> offsets) {
        return submit(new CommitOp(groupId, Map.copyOf(offsets), new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> delete(String groupId, Collection<TopicPartition> partitions) {
        return submit(new DeleteOp(groupId, List.copyOf(partitions), new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> deleteGroup(String groupId) {
        return submit(new DeleteOp(groupId, null, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> expire(String groupId, Map<TopicPartition, CommittedOffset> unchanged) {
        return submit(new ExpireOp(groupId, Map.copyOf(unchanged), new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> retainTopics(Map<String, Uuid> liveTopics) {
        return submit(new RetainOp(Map.copyOf(liveTopics), new CompletableFuture<>()));
    }

    /** Runs a compaction pass in the next duty cycle, whatever the time; for tests. */
    public CompletableFuture<Void> compactNow() {
        return submit(new CompactOp(new CompletableFuture<>()));
    }

    @Override
    public Map<TopicPartition, CommittedOffset> offsets(String groupId) {
        return published.getOrDefault(groupId, Map.of());
    }

    @Override
    public Set<String> groups() {
        return Set.copyOf(published.keySet());
    }

    // ---------------------------------------------------------------- the duty-cycle thread

    @Override
    public String roleName() {
        return "pier-offsets";
    }

    @Override
    boolean forcesPass(Op op) {
        return op instanceof CompactOp;
    }

    /** The key's published offset, rewritten as it is. */
    @Override
    Staged rewrite(Object coldKey) {
        if (coldKey instanceof PendingKey p) {
            CommittedOffset current = pendingOffsets(p.groupId(), p.producerId()).get(p.partition());
            return current == null ? null : new Staged(p, current);
        }
        OffsetKey k = (OffsetKey) coldKey;
        CommittedOffset current = offsets(k.groupId()).get(k.partition());
        return current == null ? null : new Staged(k, current);
    }

    @Override
    Staging<Staged> stage(List<Op> ops) {
        return new Changes(ops);
    }

    @Override
    ShareStateLog.Entry entry(Staged s) {
        byte[] key = s.key() instanceof PendingKey p ? OffsetRecords.pendingKey(p.groupId(), p.producerId(),
                p.partition()) : OffsetRecords.key(((OffsetKey) s.key()).groupId(), ((OffsetKey) s.key()).partition());
        return new ShareStateLog.Entry(key, s.value() == null ? null : OffsetRecords.value(s.value()));
    }

    @Override
    void appended(Staged s, long offset) {
        if (s.value() == null) {
            policy().onDeleted(s.key());
        } else {
            policy().onFullRecord(s.key(), offset);
        }
    }

    /**
     * A change staged in this cycle: its key (an {@link OffsetKey} or a {@link PendingKey}) and its
     * record's value (null: a tombstone). Package-private only because the base class names it.
     */
    record Staged(Object key, CommittedOffset value) {}

    /**
     * One cycle's changes: the touched groups copied from the published view and changed, one
     * record per changed key. Nothing is refused, so the cycle's submissions complete, or fail,
     * together.
     */
    private final class Changes implements Staging<Staged> {
        private final List<Op> ops;
        private final Map<String, Map<TopicPartition, CommittedOffset>> staged = new HashMap<>();
        private final Map<String, Map<Long, Map<TopicPartition, CommittedOffset>>> stagedPending = new HashMap<>();
        private final List<Staged> records = new ArrayList<>();

        Changes(List<Op> ops) {
            this.ops = ops;
            for (Op op : ops) {
                stageChange(op);
            }
        }

        private Map<TopicPartition, CommittedOffset> working(String groupId) {
            return staged.computeIfAbsent(groupId, g -> new HashMap<>(offsets(g)));
        }

        private Map<TopicPartition, CommittedOffset> workingPending(String groupId, long producerId) {
            return stagedPending.computeIfAbsent(groupId, g -> new HashMap<>())
                    .computeIfAbsent(producerId, p -> new HashMap<>(pendingOffsets(groupId, p)));
        }

        private void stageChange(Op op) {
            if (op instanceof PendingOp p) {
                Map<TopicPartition, CommittedOffset> m = workingPending(p.groupId(), p.producerId());
                p.offsets().forEach((tp, o) -> {
                    m.put(tp, o);
                    records.add(new Staged(new PendingKey(p.groupId(), p.producerId(), tp), o));
                });
            } else if (op instanceof CompletePendingOp c) {
                stageCompletion(c);
            } else if (op instanceof CommitOp c) {
                Map<TopicPartition, CommittedOffset> m = working(c.groupId());
                c.offsets().forEach((tp, o) -> {
                    m.put(tp, o);
                    records.add(new Staged(new OffsetKey(c.groupId(), tp), o));
                });
            } else if (op instanceof DeleteOp d) {
                Map<TopicPartition, CommittedOffset> m = working(d.groupId());
                List<TopicPartition> gone = new ArrayList<>(d.partitions() == null ? m.keySet() : d.partitions());
                for (TopicPartition tp : gone) {
                    if (m.remove(tp) != null) {
                        records.add(new Staged(new OffsetKey(d.groupId(), tp), null));
                    }
                }
            } else if (op instanceof ExpireOp e) {
                Map<TopicPartition, CommittedOffset> m = working(e.groupId());
                e.unchanged().forEach((tp, seen) -> {
                    // A commit staged or published since the caller looked is newer: it stays.
                    if (seen.equals(m.get(tp))) {
                        m.remove(tp);
                        records.add(new Staged(new OffsetKey(e.groupId(), tp), null));
                    }
                });
            } else if (op instanceof RetainOp r) {
                Set<String> groups = new HashSet<>(published.keySet());
                groups.addAll(staged.keySet());
                for (String g : groups) {
                    Map<TopicPartition, CommittedOffset> m = working(g);
                    List<TopicPartition> gone = new ArrayList<>();
                    m.forEach((tp, o) -> {
                        if (!o.topicId().equals(r.liveTopics().get(tp.topic()))) {
                            gone.add(tp);
                        }
                    });
                    for (TopicPartition tp : gone) {
                        m.remove(tp);
                        records.add(new Staged(new OffsetKey(g, tp), null));
                    }
                }
            }
        }

        /**
         * The group's marker: each pending offset becomes its committed offset (commit) or goes
         * (abort). Each committed record goes ahead of its pending tombstone, so a log cut short
         * anywhere never holds the tombstone without the commit; and the coordinator writes the
         * marker again after a crash until the transaction is COMPLETE, so a cut is redone.
         */
        private void stageCompletion(CompletePendingOp c) {
            Map<TopicPartition, CommittedOffset> pending = workingPending(c.groupId(), c.producerId());
            Map<TopicPartition, CommittedOffset> committed = c.commit() ? working(c.groupId()) : null;
            pending.forEach((tp, o) -> {
                if (committed != null) {
                    committed.put(tp, o);
                    records.add(new Staged(new OffsetKey(c.groupId(), tp), o));
                }
                records.add(new Staged(new PendingKey(c.groupId(), c.producerId(), tp), null));
            });
            pending.clear();
        }

        @Override
        public List<Staged> records() {
            return records;
        }

        @Override
        public void durable() {
            // Committed offsets first, pending ones after: OffsetFetch with require_stable reads the
            // pending view first, so a marker never shows a partition as neither pending nor committed.
            staged.forEach((g, m) -> {
                if (m.isEmpty()) {
                    published.remove(g);
                } else {
                    published.put(g, Map.copyOf(m));
                }
            });
            stagedPending.forEach((g, byProducer) -> {
                Map<Long, Map<TopicPartition, CommittedOffset>> all = new HashMap<>(publishedPending.getOrDefault(g,
                        Map.of()));
                all.putAll(byProducer);
                publishPending(g, all);
            });
            for (Op op : ops) {
                op.done().complete(null);
            }
        }

        @Override
        public void notDurable(Throwable cause) {
            failTaken(cause);
        }
    }
}
