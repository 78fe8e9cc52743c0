package io.pier.server;

import io.pier.common.Clock;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One single-threaded owner of a disjoint set of partitions: their logs and every
 * share-partition on them. Other threads only enqueue commands.
 *
 * <p>Duty cycle: take the commands that arrived, run them, then flush every log they appended to
 * with one fsync each (group commit: every produce that arrived meanwhile shares it), then run the
 * callbacks waiting for durability, then the periodic tickers (lock expiry, retention).
 */
public final class Shard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Shard.class);
    private static final int MAX_COMMANDS_PER_CYCLE = 4096;
    private static final long IDLE_TICK_MS = 10;

    private final int id;
    private final Clock clock;
    private final FatalErrorHandler fatal;
    private final BlockingQueue<Runnable> commands = new LinkedBlockingQueue<>();
    private final Map<PartitionLog, List<Runnable>> awaitingFlush = new IdentityHashMap<>();
    private final List<LongConsumer> tickers = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    /** Told when a flush fails: the broker must stop acknowledging rather than carry on. */
    public interface FatalErrorHandler {
        void onFatal(String what, Throwable cause);
    }

    Shard(int id, Clock clock, FatalErrorHandler fatal) {
        this.id = id;
        this.clock = clock;
        this.fatal = fatal;
        this.thread = new Thread(this::run, "pier-shard-" + id);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    public int id() {
        return id;
    }

    public boolean inShardThread() {
        return Thread.currentThread() == thread;
    }

    public void execute(Runnable command) {
        if (!running) {
            throw new IllegalStateException("shard " + id + " is stopped");
        }
        commands.add(command);
    }

    public <T> CompletableFuture<T> call(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** Shard thread only: run {@code onDurable} once everything appended to {@code log} so far is flushed. */
    public void afterFlush(PartitionLog log, Runnable onDurable) {
        awaitingFlush.computeIfAbsent(log, l -> new ArrayList<>()).add(onDurable);
    }

    /** Shard thread only: called with the monotonic time at every duty cycle. */
    public void addTicker(LongConsumer ticker) {
        tickers.add(ticker);
    }

    private void run() {
        List<Runnable> batch = new ArrayList<>();
        while (running) {
            try {
                Runnable first = commands.poll(IDLE_TICK_MS, TimeUnit.MILLISECONDS);
                if (first != null) {
                    batch.add(first);
                    commands.drainTo(batch, MAX_COMMANDS_PER_CYCLE);
                }
                for (Runnable r : batch) {
                    runSafely(r);
                }
                batch.clear();
                flushAppended();
                long nowMs = clock.monoMs();
                for (int i = 0; i < tickers.size(); i++) {
                    try {
                        tickers.get(i).accept(nowMs);
                    } catch (RuntimeException e) {
                        LOG.error("shard {} ticker failed", id, e);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void flushAppended() {
        if (awaitingFlush.isEmpty()) {
            return;
        }
        List<Map.Entry<PartitionLog, List<Runnable>>> flushed = new ArrayList<>(awaitingFlush.entrySet());
        awaitingFlush.clear();
        for (Map.Entry<PartitionLog, List<Runnable>> e : flushed) {
            try {
                e.getKey().flush();
            } catch (IOException | RuntimeException ex) {
                // fsyncgate: the page cache may already have dropped the data; never retry and
                // never acknowledge. The broker halts and recovers from disk on restart.
                fatal.onFatal("flush of a partition log failed", ex);
                return;
            }
            for (Runnable r : e.getValue()) {
                runSafely(r);
            }
        }
    }

    private void runSafely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("shard {} command failed", id, e);
        }
    }

    @Override
    public void close() {
        if (inShardThread()) {
            running = false;
            return;
        }
        CompletableFuture<Void> drained = new CompletableFuture<>();
        commands.add(() -> drained.complete(null));
        try {
            drained.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("shard {} did not drain in time", id);
        }
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
