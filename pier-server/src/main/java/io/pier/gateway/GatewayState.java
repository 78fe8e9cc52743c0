package io.pier.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.pier.runtime.AgentHost;
import io.pier.runtime.AgentSlot;
import io.pier.state.DurableSharePersister;
import io.pier.state.ShareStateStore;

/**
 * Where a gateway keeps its share state: the partitions of a state topic on the upstream
 * ({@code pier.gateway.state.topic}, {@code pier.gateway.state.partitions}), each written by one
 * {@link DurableSharePersister} agent over a {@link KafkaShareStateLog} on its own runner thread,
 * so a slow commit on one partition does not hold the others. A write is durable when the
 * upstream has committed it ({@code acks=all}, replicated), before the client is told.
 */
public final class GatewayState implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayState.class);
    public static final String TOPIC = "pier.gateway.state.topic";
    public static final String PARTITIONS = "pier.gateway.state.partitions";
    static final String DEFAULT_TOPIC = "__pier_share_state";
    static final int DEFAULT_PARTITIONS = 8;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** One served state partition: its persister and the thread it runs on. */
    private record Served(int partition, DurableSharePersister persister, AgentSlot slot) {}

    private final Map<String, Object> upstreamSettings;
    private final String topic;
    private final PartitionedShareState store;
    private final DurableSharePersister.Options options;
    private final AgentHost agents;
    private final DurableSharePersister.FatalHandler fatal;
    private final Map<Integer, Served> served = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile java.util.function.IntConsumer onLost = p -> { };

    private GatewayState(Map<String, Object> upstreamSettings, String topic, int partitions,
            DurableSharePersister.Options options, AgentHost agents, DurableSharePersister.FatalHandler fatal) {
        this.upstreamSettings = upstreamSettings;
        this.topic = topic;
        this.store = new PartitionedShareState(partitions);
        this.options = options;
        this.agents = agents;
        this.fatal = fatal;
    }

    /**
     * Creates the state topic if needed; serves none of its partitions until {@link #take}.
     */
    public static GatewayState open(Map<String, String> config, Map<String, Object> upstreamSettings,
            AgentHost agents, DurableSharePersister.FatalHandler fatal) throws IOException {
        String topic = config.getOrDefault(TOPIC, DEFAULT_TOPIC);
        int wanted = Integer.parseInt(config.getOrDefault(PARTITIONS, String.valueOf(DEFAULT_PARTITIONS)));
        int partitions = KafkaShareStateLog.createTopicIfMissing(upstreamSettings, topic, wanted, TIMEOUT);
        return new GatewayState(upstreamSettings, topic, partitions, DurableSharePersister.Options.fromProperties(config),
                agents, fatal);
    }

    /** The state topic. */
    String topic() {
        return topic;
    }

    /** How many partitions the state topic has. */
    int partitions() {
        return store.partitions();
    }

    /** True if this node serves state partition {@code p}. */
    boolean owns(int p) {
        return store.owns(p);
    }

    /** The store the share engine uses. */
    public ShareStateStore store() {
        return store;
    }

    /**
     * Opens state partition {@code p} (fencing any node that wrote it before: a node that is gone,
     * or one cut off from the group that still believes it owns it) and replays it; returns its
     * persister, whose keys and groups are this node's. {@link #serve} then puts it in service.
     */
    DurableSharePersister take(int p) throws IOException {
        Served already = served.get(p);
        if (already != null) {
            return already.persister();
        }
        long startMs = System.currentTimeMillis();
        KafkaShareStateLog log = KafkaShareStateLog.open(upstreamSettings, topic, p, transactionalId(p), TIMEOUT);
        AgentSlot slot = agents.slot();
        DurableSharePersister persister;
        try {
            persister = DurableSharePersister.open(log, options, slot.wakeup(), (what, cause) -> failed(p, what, cause));
        } catch (IOException | RuntimeException e) {
            slot.close();
            throw e;
        }
        slot.start(persister);
        served.put(p, new Served(p, persister, slot));
        LOG.info("Serving share state partition {} of upstream topic {}: {} share-partitions, {} groups ({} ms)", p,
                topic, persister.keys().size(), persister.groups().size(), System.currentTimeMillis() - startMs);
        return persister;
    }

    /**
     * Serves state partition {@code p}, taken by {@link #take}, from now on: its writes, reads and
     * the requests routed by it come here. Separate from the take so that the engine learns its
     * groups and share-partitions first, and no request finds it half known.
     */
    void serve(int p) {
        Served s = served.get(p);
        if (s != null) {
            store.own(p, s.persister());
        }
    }

    /**
     * Stops routing anything to state partition {@code p} (its writes fail, its share-partitions
     * are not served here) while it is being given up; {@link #release} then closes it.
     */
    void stopServing(int p) {
        store.disown(p);
    }

    /**
     * Stops serving state partition {@code p}: no new write goes to it, what was submitted is
     * written (unless another node fenced this one), then its log closes. Returns the keys and
     * groups it held, or null if it was not served.
     */
    DurableSharePersister release(int p) {
        Served s = served.remove(p);
        if (s == null) {
            return null;
        }
        store.disown(p);
        s.slot().close();
        LOG.info("No longer serving share state partition {} of upstream topic {}", p, topic);
        return s.persister();
    }

    /** Who gives up a state partition whose writes the upstream ended ({@link GatewayMembership}). */
    void onLost(java.util.function.IntConsumer handler) {
        onLost = handler;
    }

    /**
     * A served state partition's log failed. If the upstream ended its writes (another node took
     * it over after this one was cut off, or its transaction ran out) or did not answer in time
     * ({@link KafkaShareStateLog.LostException}), this node stops serving it at once and has it
     * given up and taken again from its durable state, here or on another node; its clients are
     * sent on meanwhile. Any other failure (the upstream refusing a write) stops the node, as a
     * failed disk stops a broker.
     */
    private void failed(int p, String what, Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof KafkaShareStateLog.LostException) {
                LOG.warn("Share state partition {} of upstream topic {}: the upstream ended this node's writes;"
                        + " giving it up: {}", p, topic, t.getMessage());
                store.disown(p);
                onLost.accept(p);
                return;
            }
        }
        fatal.onFatal(what, cause);
    }

    private String transactionalId(int p) {
        return topic + "-" + p;
    }

    @Override
    public void close() {
        for (Integer p : List.copyOf(served.keySet())) {
            release(p); // a last cycle writes what was submitted, then the log closes
        }
    }
}
