package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.log.CrashPoint;
import io.pier.log.FileIO;
import io.pier.metrics.PierMetrics;
import io.pier.runtime.AgentSlot;
import io.pier.runtime.ManualAgents;
import io.pier.state.DurableSharePersister;
import io.pier.state.ShareStateStore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A broker's services with every agent (shards, metadata, share state) run by hand on a manual
 * clock, for tests: no thread, the same order of events on every run.
 */
public final class HandDrivenServices implements AutoCloseable {
    public final ManualClock clock;
    public final ManualAgents agents;
    public final BrokerServices services;
    public final Map<String, String> config;
    private final AgentSlot stateSlot;
    private final List<String> fatal = new ArrayList<>();

    private int shareStateFlushes;

    /** Flushes (fsyncs) of the share-state log so far; the agents run on the test's thread. */
    public int shareStateFlushes() {
        return shareStateFlushes;
    }

    /** Opens the services on {@code dir} with {@code shards} shards, every log open. */
    public HandDrivenServices(Path dir, int shards) throws Exception {
        this(dir, shards, null);
    }

    /** As {@link #HandDrivenServices(Path, int)}, counting into {@code metrics} (null: none). */
    public HandDrivenServices(Path dir, int shards, PierMetrics metrics) throws Exception {
        this(dir, shards, metrics, Map.of());
    }

    /** As {@link #HandDrivenServices(Path, int, PierMetrics)}, with broker settings beyond {@code log.dirs}. */
    public HandDrivenServices(Path dir, int shards, PierMetrics metrics, Map<String, String> settings)
            throws Exception {
        this(dir, shards, metrics, settings, FileIO.REAL);
    }

    /**
     * As {@link #HandDrivenServices(Path, int, PierMetrics, Map)}, with the partition logs and the
     * offset, transaction and share-state stores opening their segment files through {@code io}.
     */
    public HandDrivenServices(Path dir, int shards, PierMetrics metrics, Map<String, String> settings, FileIO io)
            throws Exception {
        this(dir, shards, metrics, settings, io, UnaryOperator.identity());
    }

    /**
     * As {@link #HandDrivenServices(Path, int, PierMetrics, Map, FileIO)}, the services seeing the
     * share-state store through {@code store} (a test's stand-in refusing some of its calls).
     */
    public HandDrivenServices(Path dir, int shards, PierMetrics metrics, Map<String, String> settings, FileIO io,
            UnaryOperator<ShareStateStore> store) throws Exception {
        this(dir, shards, metrics, settings, io, store, new ManualClock(1_700_000_000_000L));
    }

    /**
     * As {@link #HandDrivenServices(Path, int, PierMetrics, Map, FileIO, UnaryOperator)}, on
     * {@code clock}: a test restarting the services on the same folder keeps its time going on.
     */
    public HandDrivenServices(Path dir, int shards, PierMetrics metrics, Map<String, String> settings, FileIO io,
            UnaryOperator<ShareStateStore> store, ManualClock clock) throws Exception {
        this.clock = clock;
        this.agents = new ManualAgents(clock);
        Map<String, String> all = new HashMap<>(settings);
        all.put("log.dirs", dir.toString());
        config = Map.copyOf(all);
        stateSlot = agents.slot();
        DurableSharePersister state = DurableSharePersister.open(dir.resolve("share-state"),
                DurableSharePersister.Options.DEFAULTS, clock, countingFlushes(io), stateSlot.wakeup(),
                (what, cause) -> fatal.add(what));
        stateSlot.start(state);
        long retentionCheckIntervalMs = Long.parseLong(config.getOrDefault("log.retention.check.interval.ms", "300000"));
        services = new BrokerServices(new BrokerServices.Settings(dir, shards, config, retentionCheckIntervalMs,
                ShareGroupBrokerConfig.fromProperties(config), true, 1_000, io), clock, agents, store.apply(state), metrics,
                (what, cause) -> fatal.add(what));
        agents.await(services.open());
    }

    /** {@code io}, counting the share-state log's flushes (each forces its files once). */
    private FileIO countingFlushes(FileIO io) {
        return new FileIO() {
            @Override
            public FileChannel open(Path path, boolean create) throws IOException {
                return io.open(path, create);
            }

            @Override
            public FileChannel openEmpty(Path path) throws IOException {
                return io.openEmpty(path);
            }

            @Override
            public FileChannel openAppend(Path path) throws IOException {
                return io.openAppend(path);
            }

            @Override
            public void createDirectories(Path dir) throws IOException {
                io.createDirectories(dir);
            }

            @Override
            public void move(Path source, Path target) throws IOException {
                io.move(source, target);
            }

            @Override
            public boolean deleteIfExists(Path path) throws IOException {
                return io.deleteIfExists(path);
            }

            @Override
            public void syncDirectory(Path dir) throws IOException {
                io.syncDirectory(dir);
            }

            @Override
            public void crashPoint(CrashPoint point) throws IOException {
                if (point == CrashPoint.AFTER_APPEND_BEFORE_FSYNC) {
                    shareStateFlushes++;
                }
                io.crashPoint(point);
            }
        };
    }

    /**
     * What was fatal since the last call, in order (as the broker's fatal handler was told), then
     * forgotten: a test that makes a store fail takes what it expected, so {@link #close} still
     * checks that nothing else was.
     */
    public List<String> takeFatal() {
        List<String> taken = List.copyOf(fatal);
        fatal.clear();
        return taken;
    }

    /**
     * Stops every agent of services whose disk has lost power: their closing fails as it may, and
     * what was fatal is not checked (a test's power loss made it so).
     */
    public void abandon() {
        try {
            services.close();
        } catch (RuntimeException e) {
            // the dead disk refuses what closing writes; the next services open the folder again
        }
        try {
            stateSlot.close();
        } catch (RuntimeException e) {
            // as above
        }
        fatal.clear();
    }

    /** Stops every agent; nothing may have been fatal meanwhile, beyond what {@link #takeFatal} took. */
    @Override
    public void close() {
        services.close();
        stateSlot.close();
        assertThat(fatal).as("fatal errors").isEmpty();
    }
}
