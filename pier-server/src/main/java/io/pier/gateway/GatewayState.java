package io.pier.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
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
    private final List<Served> served = new ArrayList<>();

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
     * Creates the state topic if needed and takes over every one of its partitions (a single
     * gateway node serves them all), replaying each: what the node served before it stopped, or
     * another node before it, is back.
     */
    public static GatewayState openAll(Map<String, String> config, Map<String, Object> upstreamSettings,
            AgentHost agents, DurableSharePersister.FatalHandler fatal) throws IOException {
        String topic = config.getOrDefault(TOPIC, DEFAULT_TOPIC);
        int wanted = Integer.parseInt(config.getOrDefault(PARTITIONS, String.valueOf(DEFAULT_PARTITIONS)));
        int partitions = KafkaShareStateLog.createTopicIfMissing(upstreamSettings, topic, wanted, TIMEOUT);
        GatewayState state = new GatewayState(upstreamSettings, topic, partitions,
                DurableSharePersister.Options.fromProperties(config), agents, fatal);
        try {
            for (int p = 0; p < partitions; p++) {
                state.take(p);
            }
        } catch (IOException | RuntimeException e) {
            state.close();
            throw e;
        }
        return state;
    }

    /** The store the share engine uses. */
    public ShareStateStore store() {
        return store;
    }

    /** Opens (fencing any earlier writer) and replays state partition {@code p}, then serves it. */
    private void take(int p) throws IOException {
        long startMs = System.currentTimeMillis();
        KafkaShareStateLog log = KafkaShareStateLog.open(upstreamSettings, topic, p, transactionalId(p), TIMEOUT);
        AgentSlot slot = agents.slot();
        DurableSharePersister persister;
        try {
            persister = DurableSharePersister.open(log, options, slot.wakeup(), fatal);
        } catch (IOException | RuntimeException e) {
            slot.close();
            throw e;
        }
        slot.start(persister);
        served.add(new Served(p, persister, slot));
        store.own(p, persister);
        LOG.info("Serving share state partition {} of upstream topic {}: {} share-partitions, {} groups ({} ms)", p,
                topic, persister.keys().size(), persister.groups().size(), System.currentTimeMillis() - startMs);
    }

    private String transactionalId(int p) {
        return topic + "-" + p;
    }

    @Override
    public void close() {
        for (Served s : served) {
            store.disown(s.partition());
            s.slot().close(); // a last cycle writes what was submitted, then the log closes
        }
        served.clear();
    }
}
