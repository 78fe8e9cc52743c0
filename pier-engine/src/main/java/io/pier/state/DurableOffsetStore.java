package io.pier.state;

import io.pier.common.ClosableInbox;
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
import java.util.concurrent.atomic.AtomicLong;
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
 *   retainTopics / compactNow            apply them to a copy of the touched groups
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
 */
public final class DurableOffsetStore implements OffsetStore, Agent, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DurableOffsetStore.class);
    static final int MAX_SUBMISSIONS_PER_CYCLE = 4096;
    private static final long NOT_STARTED = Long.MIN_VALUE;

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

    private sealed interface Op permits CommitOp, DeleteOp, RetainOp, CompactOp {
        CompletableFuture<Void> done();
    }

    private record CommitOp(String groupId, Map<TopicPartition, CommittedOffset> offsets,
            CompletableFuture<Void> done) implements Op {}

    /** {@code partitions} null: the whole group. */
    private record DeleteOp(String groupId, Collection<TopicPartition> partitions, CompletableFuture<Void> done)
            implements Op {}

    private record RetainOp(Map<String, Uuid> liveTopics, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    private final ShareStateLog log;
    private final Options options;
    private final Wakeup wakeup;
    private final FatalHandler fatal;
    private final ClosableInbox<Op> submitted = new ClosableInbox<>();
    private final Map<String, Map<TopicPartition, CommittedOffset>> published = new ConcurrentHashMap<>();
    private final AtomicLong recordsAppended = new AtomicLong();
    private volatile Throwable failure;
    // Owned by the duty cycle.
    private final SnapshotPolicy policy = new SnapshotPolicy(Integer.MAX_VALUE);
    private final List<Op> taken = new ArrayList<>();
    private boolean inCycle;
    private long nextPassMs = NOT_STARTED;

    private DurableOffsetStore(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal) {
        this.log = log;
        this.options = options;
        this.wakeup = wakeup;
        this.fatal = fatal;
    }

    /**
     * Replays {@code log} and returns a store over it. On failure the log is closed.
     *
     * @throws IOException if the log cannot be read or holds a record that does not decode
     */
    public static DurableOffsetStore open(ShareStateLog log, Options options, Wakeup wakeup, FatalHandler fatal)
            throws IOException {
        DurableOffsetStore s = new DurableOffsetStore(log, options, wakeup, fatal);
        try {
            s.replay();
        } catch (IOException | RuntimeException e) {
            try {
                log.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        s.policy.startColdPassesAt(log.startOffset());
        return s;
    }

    /** Opens (creating if needed) a {@link LocalShareStateLog} in {@code dir} and replays it. */
    public static DurableOffsetStore open(Path dir, Options options, Clock clock, FileIO io, Wakeup wakeup,
            FatalHandler fatal) throws IOException {
        return open(LocalShareStateLog.open(dir, options.segmentBytes(), clock, io), options, wakeup, fatal);
    }

    private void replay() throws IOException {
        Map<String, Map<TopicPartition, CommittedOffset>> groups = new HashMap<>();
        log.replay((offset, rawKey, value) -> {
            try {
                apply(groups, offset, rawKey, value);
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
            policy.onDeleted(k);
        } else {
            groups.computeIfAbsent(key.groupId(), g -> new HashMap<>())
                    .put(key.partition(), OffsetRecords.decodeValue(value));
            policy.onFullRecord(k, offset);
        }
    }

    // ---------------------------------------------------------------- OffsetStore, any thread

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

    /** Records appended since open. */
    public long recordsAppended() {
        return recordsAppended.get();
    }

    /** The log's start offset (moves on as compaction passes free old segments). */
    public long logStartOffset() {
        return log.startOffset();
    }

    private CompletableFuture<Void> submit(Op op) {
        Throwable f = failure;
        if (f != null) {
            op.done().completeExceptionally(new IOException("committed offsets are not writable after an I/O error", f));
        } else if (!submitted.offer(op)) {
            op.done().completeExceptionally(new IOException("committed-offset store is closed"));
        } else {
            wakeup.wake();
        }
        return op.done();
    }

    // ---------------------------------------------------------------- Agent, the duty-cycle thread

    @Override
    public String roleName() {
        return "pier-offsets";
    }

    @Override
    public int doWork(long nowMs) {
        if (submitted.isClosed()) {
            return 0;
        }
        if (nextPassMs == NOT_STARTED) {
            nextPassMs = after(nowMs);
        }
        boolean due = nowMs >= nextPassMs;
        int work = cycle(due);
        if (due) {
            nextPassMs = after(nowMs);
        }
        return work;
    }

    @Override
    public long nextDeadlineMs() {
        return failure != null || submitted.isClosed() || nextPassMs == NOT_STARTED ? Long.MAX_VALUE : nextPassMs;
    }

    private long after(long nowMs) {
        long interval = options.compactionIntervalMs();
        return nowMs > Long.MAX_VALUE - interval ? Long.MAX_VALUE : nowMs + interval;
    }

    private int cycle(boolean passDue) {
        inCycle = true;
        for (Op op; taken.size() < MAX_SUBMISSIONS_PER_CYCLE && (op = submitted.poll()) != null; ) {
            taken.add(op);
        }
        int work = taken.size();
        if (failure != null) {
            failAll(taken, failure);
        } else {
            boolean pass = passDue || taken.stream().anyMatch(CompactOp.class::isInstance);
            commit(pass);
            work += pass ? 1 : 0;
        }
        taken.clear();
        inCycle = false;
        return work;
    }

    /** A change staged in this cycle: its key and its record's value (null: a tombstone). */
    private record Staged(OffsetKey key, CommittedOffset value) {}

    private void commit(boolean pass) {
        long passEnd = log.endOffset();
        List<Staged> records = new ArrayList<>();
        if (pass && log.reclaimable()) {
            // The pass rewrites the published (pre-cycle) values, so this cycle's changes go after them.
            for (Object key : policy.coldKeys()) {
                OffsetKey k = (OffsetKey) key;
                CommittedOffset current = offsets(k.groupId()).get(k.partition());
                if (current != null) {
                    records.add(new Staged(k, current));
                }
            }
        }
        Map<String, Map<TopicPartition, CommittedOffset>> staged = new HashMap<>();
        for (Op op : taken) {
            stage(op, staged, records);
        }
        if (!records.isEmpty() && !appendAndFlush(records)) {
            failAll(taken, failure);
            return;
        }
        staged.forEach((g, m) -> {
            if (m.isEmpty()) {
                published.remove(g);
            } else {
                published.put(g, Map.copyOf(m));
            }
        });
        for (Op op : taken) {
            op.done().complete(null);
        }
        if (pass) {
            policy.endColdPass(passEnd);
            long needed = policy.neededFrom(log.endOffset());
            try {
                if (needed > log.startOffset()) {
                    log.moveStart(needed);
                }
            } catch (IOException | RuntimeException e) {
                onFailure(e);
            }
        }
    }

    private Map<TopicPartition, CommittedOffset> working(Map<String, Map<TopicPartition, CommittedOffset>> staged,
            String groupId) {
        return staged.computeIfAbsent(groupId, g -> new HashMap<>(offsets(g)));
    }

    private void stage(Op op, Map<String, Map<TopicPartition, CommittedOffset>> staged, List<Staged> records) {
        if (op instanceof CommitOp c) {
            Map<TopicPartition, CommittedOffset> m = working(staged, c.groupId());
            c.offsets().forEach((tp, o) -> {
                m.put(tp, o);
                records.add(new Staged(new OffsetKey(c.groupId(), tp), o));
            });
        } else if (op instanceof DeleteOp d) {
            Map<TopicPartition, CommittedOffset> m = working(staged, d.groupId());
            List<TopicPartition> gone = new ArrayList<>(d.partitions() == null ? m.keySet() : d.partitions());
            for (TopicPartition tp : gone) {
                if (m.remove(tp) != null) {
                    records.add(new Staged(new OffsetKey(d.groupId(), tp), null));
                }
            }
        } else if (op instanceof RetainOp r) {
            Set<String> groups = new HashSet<>(published.keySet());
            groups.addAll(staged.keySet());
            for (String g : groups) {
                Map<TopicPartition, CommittedOffset> m = working(staged, g);
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

    private boolean appendAndFlush(List<Staged> records) {
        try {
            List<ShareStateLog.Entry> entries = new ArrayList<>(records.size());
            for (Staged s : records) {
                entries.add(new ShareStateLog.Entry(OffsetRecords.key(s.key().groupId(), s.key().partition()),
                        s.value() == null ? null : OffsetRecords.value(s.value())));
            }
            long first = log.append(entries);
            recordsAppended.addAndGet(entries.size());
            for (int i = 0; i < records.size(); i++) {
                Staged s = records.get(i);
                if (s.value() == null) {
                    policy.onDeleted(s.key());
                } else {
                    policy.onFullRecord(s.key(), first + i);
                }
            }
            log.flush();
            return true;
        } catch (IOException | RuntimeException e) {
            onFailure(e);
            return false;
        }
    }

    private void onFailure(Throwable e) {
        if (failure == null) {
            failure = e;
            LOG.error("Committed-offset log {} failed; no further offsets are written", log.name(), e);
            fatal.onFatal("writing the committed-offset log failed", e);
        }
    }

    private static void failAll(List<Op> ops, Throwable cause) {
        for (Op op : ops) {
            op.done().completeExceptionally(new IOException("committed offsets are not writable after an I/O error",
                    cause));
        }
    }

    @Override
    public void onClose() {
        close();
    }

    /** Writes what was submitted before the close (unless the log failed), then closes the log. */
    @Override
    public void close() {
        if (submitted.isClosed()) {
            return;
        }
        submitted.close();
        if (inCycle) {
            if (failure == null) {
                failure = new IllegalStateException("a committed-offset duty cycle did not finish");
            }
            failAll(taken, failure);
            taken.clear();
        }
        while (!submitted.isEmpty()) {
            cycle(false);
        }
        try {
            log.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing the committed-offset log {} failed", log.name(), e);
        }
    }
}
