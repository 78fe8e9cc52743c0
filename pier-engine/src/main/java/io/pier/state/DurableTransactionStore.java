package io.pier.state;

import io.pier.common.Clock;
import io.pier.common.Wakeup;
import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link TransactionStore} of a broker: one {@link TransactionRecord} per transactional id in a
 * {@link ShareStateLog} (on a broker a {@link LocalShareStateLog} under
 * {@code <data>/transaction-state}, CRC-checked, fdatasync'd), written with group commit by the
 * {@link DurableStoreAgent} duty cycle. Record format: {@link TransactionRecords}.
 *
 * <pre>
 *   write / remove (any thread) --&gt; queue --&gt; doWork: one record per submission, in order
 *                                             (a compaction pass first rewrites cold ids whole)
 *                                             append, ONE flush, publish, complete the futures
 * </pre>
 *
 * <p><b>Threading.</b> As {@link DurableOffsetStore}: the log belongs to the duty-cycle thread,
 * other threads meet the submission queue and the published map, replaced only after the flush,
 * so {@link #transactions} never shows what a crash could take back.
 *
 * <p><b>Recovery.</b> {@link #open} replays the log from its start: a value replaces its id's
 * record, a null value removes it. A torn tail is dropped by the log.
 */
public final class DurableTransactionStore
        extends DurableStoreAgent<DurableTransactionStore.Op, DurableTransactionStore.Staged>
        implements TransactionStore {
    private static final Logger LOG = LoggerFactory.getLogger(DurableTransactionStore.class);
    private static final Wording WORDING = new Wording("transaction-state",
            "transaction state is not writable after an I/O error", "transaction-state store is closed",
            "no further transaction state is written");

    /**
     * @param compactionIntervalMs how often ids whose latest record sits in old segments are
     *     rewritten, so the log start can move past them
     * @param segmentBytes segment size of the local log
     */
    public record Options(long compactionIntervalMs, long segmentBytes) {
        public static final Options DEFAULTS = new Options(300_000, 16L * 1024 * 1024);

        public Options {
            if (compactionIntervalMs < 1 || segmentBytes < 1024) {
                throw new IllegalArgumentException("bad transaction-state options");
            }
        }
    }

    /** A submission (package-private only because the base class names it). */
    sealed interface Op extends Submission permits WriteOp, RemoveOp, CompactOp {}

    private record WriteOp(TransactionRecord record, CompletableFuture<Void> done) implements Op {}

    private record RemoveOp(String transactionalId, CompletableFuture<Void> done) implements Op {}

    private record CompactOp(CompletableFuture<Void> done) implements Op {}

    /** A staged record: the id and its value (null: a tombstone). */
    record Staged(String transactionalId, TransactionRecord value) {}

    private final Map<String, TransactionRecord> published = new ConcurrentHashMap<>();

    private DurableTransactionStore(ShareStateLog log, Options options, Wakeup wakeup,
            DurableOffsetStore.FatalHandler fatal) {
        super(log, new SnapshotPolicy(Integer.MAX_VALUE), options.compactionIntervalMs(), wakeup, fatal::onFatal,
                WORDING);
    }

    /**
     * Replays {@code log} and returns a store over it. On failure the log is closed.
     *
     * @throws IOException if the log cannot be read or holds a record that does not decode
     */
    public static DurableTransactionStore open(ShareStateLog log, Options options, Wakeup wakeup,
            DurableOffsetStore.FatalHandler fatal) throws IOException {
        DurableTransactionStore s = new DurableTransactionStore(log, options, wakeup, fatal);
        s.recover(() -> s.replay(log));
        return s;
    }

    /** Opens (creating if needed) a {@link LocalShareStateLog} in {@code dir} and replays it. */
    public static DurableTransactionStore open(Path dir, Options options, Clock clock, FileIO io, Wakeup wakeup,
            DurableOffsetStore.FatalHandler fatal) throws IOException {
        return open(LocalShareStateLog.open(dir, options.segmentBytes(), clock, io), options, wakeup, fatal);
    }

    private void replay(ShareStateLog log) throws IOException {
        Map<String, TransactionRecord> ids = new HashMap<>();
        log.replay((offset, rawKey, value) -> {
            try {
                apply(ids, offset, rawKey, value);
            } catch (RuntimeException e) {
                throw new IOException("undecodable transaction-state record at offset " + offset + " of "
                        + log.name() + ": " + e.getMessage(), e);
            }
        });
        published.putAll(ids);
        LOG.info("Transaction state loaded from {}: {} transactional ids, offsets {}..{}", log.name(),
                published.size(), log.startOffset(), log.endOffset());
    }

    private void apply(Map<String, TransactionRecord> ids, long offset, ByteBuffer rawKey, ByteBuffer value) {
        String id = TransactionRecords.decodeKey(rawKey);
        if (value == null) {
            ids.remove(id);
            policy().onDeleted(id);
        } else {
            ids.put(id, TransactionRecords.decodeValue(id, value));
            policy().onFullRecord(id, offset);
        }
    }

    // ---------------------------------------------------------------- TransactionStore, any thread

    @Override
    public CompletableFuture<Void> write(TransactionRecord record) {
        return submit(new WriteOp(record, new CompletableFuture<>()));
    }

    @Override
    public CompletableFuture<Void> remove(String transactionalId) {
        return submit(new RemoveOp(transactionalId, new CompletableFuture<>()));
    }

    /** Runs a compaction pass in the next duty cycle, whatever the time; for tests. */
    public CompletableFuture<Void> compactNow() {
        return submit(new CompactOp(new CompletableFuture<>()));
    }

    @Override
    public Map<String, TransactionRecord> transactions() {
        return Map.copyOf(published);
    }

    // ---------------------------------------------------------------- the duty-cycle thread

    @Override
    public String roleName() {
        return "pier-transactions";
    }

    @Override
    boolean forcesPass(Op op) {
        return op instanceof CompactOp;
    }

    @Override
    Staged rewrite(Object coldKey) {
        String id = (String) coldKey;
        TransactionRecord current = published.get(id);
        return current == null ? null : new Staged(id, current);
    }

    @Override
    Staging<Staged> stage(List<Op> ops) {
        List<Staged> records = new ArrayList<>();
        for (Op op : ops) {
            if (op instanceof WriteOp w) {
                records.add(new Staged(w.record().transactionalId(), w.record()));
            } else if (op instanceof RemoveOp r) {
                records.add(new Staged(r.transactionalId(), null));
            }
        }
        return new Staging<>() {
            @Override
            public List<Staged> records() {
                return records;
            }

            @Override
            public void durable() {
                // In submission order, so the latest write of an id in the cycle wins, as on replay.
                for (Staged s : records) {
                    if (s.value() == null) {
                        published.remove(s.transactionalId());
                    } else {
                        published.put(s.transactionalId(), s.value());
                    }
                }
                for (Op op : ops) {
                    op.done().complete(null);
                }
            }

            @Override
            public void notDurable(Throwable cause) {
                failTaken(cause);
            }
        };
    }

    @Override
    ShareStateLog.Entry entry(Staged s) {
        return new ShareStateLog.Entry(TransactionRecords.key(s.transactionalId()),
                s.value() == null ? null : TransactionRecords.value(s.value()));
    }

    @Override
    void appended(Staged s, long offset) {
        if (s.value() == null) {
            policy().onDeleted(s.transactionalId());
        } else {
            policy().onFullRecord(s.transactionalId(), offset);
        }
    }
}
