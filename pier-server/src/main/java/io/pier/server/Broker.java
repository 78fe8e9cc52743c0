package io.pier.server;

import io.pier.common.Clock;
import io.pier.console.Console;
import io.pier.console.ServiceSources;
import io.pier.group.ShareGroupBrokerConfig;
import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import io.pier.gateway.GatewayApis;
import io.pier.gateway.GatewayCluster;
import io.pier.gateway.GatewayMembership;
import io.pier.gateway.GroupConfigSync;
import io.pier.gateway.StatePartitionAssignor;
import io.pier.gateway.GatewayState;
import io.pier.gateway.Upstream;
import io.pier.gateway.UpstreamClient;
import io.pier.gateway.UpstreamDeadLetterQueues;
import io.pier.gateway.UpstreamScramCredentials;
import io.pier.gateway.UpstreamAcls;
import io.pier.metrics.MetricsEndpoint;
import io.pier.metrics.PierMetrics;
import io.pier.network.NetworkServer;
import io.pier.protocol.ApiRouter;
import io.pier.runtime.AgentHost;
import io.pier.runtime.AgentSlot;
import io.pier.service.BrokerServices;
import io.pier.service.NodeInfo;
import io.pier.state.DurableSharePersister;
import io.pier.state.ShareStateStore;
import java.io.IOException;
import java.time.Duration;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import io.pier.protocol.Access;
import io.pier.security.acl.AclAuthorizer;
import io.pier.security.acl.AclStore;
import io.pier.security.acl.AuthorizerConfig;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Wires the parts of one broker together and owns their lifecycle. */
final class Broker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
    /** Folder of the share-state log inside the data folder. */
    static final String SHARE_STATE_DIR = "share-state";
    /**
     * Persist each acquisition (as AVAILABLE with the new delivery count) before the ShareFetch
     * response carries it, so delivery counts are exact across crashes. Default true.
     */
    static final String DELIVERY_COUNT_DURABLE = "pier.share.delivery.count.durable";

    private final BrokerConfig config;
    private final Runnable onFatalExit;
    private final AtomicBoolean failed = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final FileChannel lockChannel;
    private final FileLock dataLock;
    private final ShareStateStore shareState;
    /** Stops the share-state agents: the local one, or a gateway's one per state partition. */
    private final AutoCloseable shareStateRunner;
    private final BrokerServices services;
    private final ParallelStep<Listener> listener;
    private final NodeInfo node;
    private final MetricsEndpoint metricsEndpoint;
    /** The web console on the metrics port; null when metrics are off. */
    private final Console console;
    /** The upstream cluster in gateway mode; null for a broker of its own. */
    private final Upstream upstream;
    /** A gateway's share state on the upstream, and its place in the group of gateway nodes; else null. */
    private final GatewayState gatewayState;
    private final GatewayMembership membership;
    private final GroupConfigSync gatewayConfigs;
    /** A gateway's client of the other gateway nodes; else null. */
    private final UpstreamClient peers;
    /** A gateway's other clients of the upstream (ACLs, SCRAM credentials, dead-letter queues), closed with it. */
    private final Deque<AutoCloseable> gatewayClients = new ArrayDeque<>();
    private static final Duration UPSTREAM_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /**
     * @param listener the listener being built ({@link Listener#startBuilding}), owned from here on:
     *     a failed start closes it
     */
    /** The ACL authorizer if {@code authorizer.class.name} turns it on, its ACLs from {@code <data>/meta}; else null. */
    private static AclAuthorizer openAcls(BrokerConfig config, Path dataDir, FileIO io) throws IOException {
        AuthorizerConfig acl = AuthorizerConfig.fromProperties(config.raw());
        return acl.enabled() ? AclAuthorizer.open(acl, new AclStore(dataDir.resolve("meta"), io)) : null;
    }

    Broker(BrokerConfig config, Clock clock, FileIO io, Runnable onFatalExit, ParallelStep<Listener> listener)
            throws Exception {
        this.config = config;
        this.onFatalExit = onFatalExit;
        long startMs = clock.monoMs();
        Path dataDir = config.dataDir().toAbsolutePath();
        // What is already running when a later step fails (a damaged log, a taken port) is stopped
        // in reverse order, so a failed start leaves no threads, open files or data-folder lock.
        Deque<AutoCloseable> started = new ArrayDeque<>();
        this.listener = listener;
        started.push(listener);
        try {
            AtomicFiles.createDirectories(io, dataDir);
            lockChannel = FileChannel.open(dataDir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            started.push(lockChannel);
            dataLock = lockChannel.tryLock();
            if (dataLock == null) {
                throw new IOException("another broker is using the data folder " + dataDir);
            }
            ShareGroupBrokerConfig shareConfig = ShareGroupBrokerConfig.fromProperties(config.raw());
            // Share state and group existence: an internal log under <data>/share-state (on a
            // gateway: the partitions of a state topic on the upstream), written by an agent on its
            // own runner thread with group commit; a failed write there, or a failed duty cycle,
            // halts the broker like any other.
            AgentHost agents = AgentHost.threads(clock, TimeUnit.MICROSECONDS.toNanos(config.agentSpinUs()),
                    (agent, cause) -> onFatal(agent + " failed", cause));
            if (config.gateway()) {
                // A gateway keeps its share state on the upstream, so it connects first.
                upstream = Upstream.connect(config.upstreamClientSettings(), UPSTREAM_CONNECT_TIMEOUT);
                started.push(upstream);
                gatewayState = GatewayState.open(config.raw(), config.upstreamClientSettings(), agents,
                        this::onFatal);
                started.push(gatewayState);
                shareStateRunner = gatewayState;
                shareState = gatewayState.store();
            } else {
                upstream = null;
                gatewayState = null;
                AgentSlot slot = agents.slot();
                shareStateRunner = slot;
                shareState = openLocalShareState(config, dataDir, clock, io, slot);
                started.push(slot);
            }
            boolean durableCounts = BrokerConfig.bool(DELIVERY_COUNT_DURABLE,
                    config.raw().getOrDefault(DELIVERY_COUNT_DURABLE, "true"));
            PierMetrics metrics = config.metricsEnabled() ? new PierMetrics(config.shards()) : null;
            services = new BrokerServices(new BrokerServices.Settings(dataDir, config.shards(), logSettings(config),
                    config.retentionCheckIntervalMs(), shareConfig, durableCounts, config.metricsSnapshotIntervalMs(), io),
                    clock, agents, shareState, metrics, this::onFatal);
            started.push(services);
            awaitOpen(services);

            ApiRouter router = listener.join().router();
            if (metrics != null) {
                router.observer(metrics::onResponse);
            }
            // Handlers read the node when they answer; its port is known only once the network has bound.
            String clusterId;
            GatewayCluster gatewayCluster = null;
            AclAuthorizer acls = null;
            if (config.gateway()) {
                // ACLs every node shares on the upstream, read before the first request is checked.
                AuthorizerConfig aclConfig = AuthorizerConfig.fromProperties(config.raw());
                if (aclConfig.enabled()) {
                    acls = AclAuthorizer.remote(aclConfig);
                    UpstreamAcls shared = UpstreamAcls.start(config.raw(), config.upstreamClientSettings(), acls);
                    started.push(shared);
                    gatewayClients.push(shared);
                }
                Apis.register(router, services, config, this::node, clock, acls);
                gatewayConfigs = GroupConfigSync.start(config.raw(), config.upstreamClientSettings(),
                        services.shareGroups(), config.nodeId());
                started.push(gatewayConfigs);
                peers = new UpstreamClient(config.peerClientSettings(), "pier-peers");
                started.push(peers);
                gatewayCluster = GatewayApis.register(router, upstream, peers, this::node, clock.wallMs(), services,
                        gatewayState, gatewayConfigs, acls == null ? Access.ALLOW_ALL : new Access(acls));
                // SASL on the gateway's own listeners, with credentials every node shares on the upstream.
                UpstreamScramCredentials credentials = UpstreamScramCredentials.start(config.raw(),
                        config.upstreamClientSettings(), listener.join().scram());
                started.push(credentials);
                gatewayClients.push(credentials);
                ScramBootstrap.apply(config.raw(), listener.join().scram());
                Apis.registerSasl(router, listener.join().scram(), acls, services.topics()::metadataWrite);
                UpstreamDeadLetterQueues deadLetterQueues = UpstreamDeadLetterQueues.open(
                        config.upstreamClientSettings(), Duration.ofMillis(GatewayMembership.sessionTimeoutMs(config.raw())));
                started.push(deadLetterQueues);
                gatewayClients.push(deadLetterQueues);
                services.deadLetterQueues(deadLetterQueues);
                clusterId = upstream.clusterId();
            } else {
                gatewayConfigs = null;
                peers = null;
                acls = openAcls(config, dataDir, io);
                Apis.register(router, services, config, this::node, clock, acls);
                ScramBootstrap.apply(config.raw(), listener.join().scram());
                Apis.registerSasl(router, listener.join().scram(), acls, services.topics()::metadataWrite);
                clusterId = services.topics().clusterId();
            }
            NetworkServer network = listener.join().server();
            Map<String, NodeInfo.Address> advertised = new LinkedHashMap<>();
            for (ListenerSpec spec : config.listeners()) {
                network.bind(spec.name(), spec.host(), spec.port());
                int boundPort = network.boundAddress(spec.name()).getPort();
                advertised.put(spec.name(), new NodeInfo.Address(spec.advertisedHost(),
                        spec.advertisedPort() == 0 ? boundPort : spec.advertisedPort()));
            }
            if (metrics != null) {
                metrics.connections(List.copyOf(advertised.keySet()), network.connectionLimits()::connections);
                metrics.requestBytes(network.requestBytes()::heldBytes, network.requestBytes()::waits);
                if (acls != null) {
                    metrics.aclBindings(acls::count);
                }
            }
            NodeInfo.Address first = advertised.values().iterator().next();
            node = new NodeInfo(config.nodeId(), first.host(), first.port(), clusterId, advertised);
            if (gatewayCluster != null) {
                // Last: from its first assignment on, clients are sent here for share groups.
                membership = GatewayMembership.join(config.raw(), config.upstreamClientSettings(),
                        new StatePartitionAssignor.NodeAddress(node.nodeId(), node.host(), node.port()), gatewayState,
                        services, gatewayCluster, upstream, this::onFatal);
                started.push(membership);
            } else {
                membership = null;
            }
            if (metrics == null) {
                console = null;
                metricsEndpoint = null;
            } else {
                console = Console.start(metrics, config.console(), new ServiceSources(services, this::node,
                        placement(gatewayCluster)), acls);
                started.push(console);
                metricsEndpoint = metrics.serve(config.metricsHost(), config.metricsPort(), console.handler());
                started.push(metricsEndpoint);
            }
        } catch (Exception | Error e) {
            stopAfterFailedStart(started, e);
            throw e;
        }
        LOG.info("Pier {} {} serving Kafka clients on {} with data in {} (cluster {}, {} shards, started in {} ms)",
                config.gateway() ? "gateway" : "broker", node.nodeId(), describeListeners(config, node), dataDir, node.clusterId(), services.shardCount(),
                clock.monoMs() - startMs);
        if (metricsEndpoint != null) {
            LOG.info("Metrics on http://{}:{}/metrics, web console on http://{}:{}/", config.metricsHost(),
                    metricsEndpoint.port(), config.metricsHost(), metricsEndpoint.port());
        }
    }

    /** Where the console reads a gateway's nodes serve share state; null on a broker. */
    private static ServiceSources.Placement placement(GatewayCluster cluster) {
        if (cluster == null) {
            return null;
        }
        return new ServiceSources.Placement() {
            @Override
            public java.util.Optional<NodeInfo> coordinatingElsewhere(String groupId) {
                return cluster.coordinatingElsewhere(groupId);
            }

            @Override
            public java.util.Optional<NodeInfo> servingElsewhere(org.apache.kafka.common.Uuid topicId, int partition) {
                return cluster.servingElsewhere(topicId, partition);
            }
        };
    }

    /** The share state of a broker: an internal log under {@code <data>/share-state}, its agent started. */
    private DurableSharePersister openLocalShareState(BrokerConfig config, Path dataDir, Clock clock, FileIO io,
            AgentSlot slot) throws IOException {
        DurableSharePersister persister = DurableSharePersister.open(dataDir.resolve(SHARE_STATE_DIR),
                DurableSharePersister.Options.fromProperties(config.raw()), clock, io, slot.wakeup(), this::onFatal);
        slot.start(persister);
        return persister;
    }

    /**
     * The settings the logs are opened with. A gateway's logs are mirrors of upstream partitions,
     * caches it fetches again after a restart, so they are not forced to disk, and they keep what
     * they hold until the share-partitions reading them move past it ({@code MirrorTrimStep}): a
     * local retention would move the start of share-partitions whose records the upstream still has.
     */
    private static Map<String, String> logSettings(BrokerConfig config) {
        if (!config.gateway()) {
            return config.raw();
        }
        Map<String, String> raw = new LinkedHashMap<>(config.raw());
        raw.put("pier.log.durability", "none");
        raw.put("log.retention.ms", "-1");
        raw.put("log.retention.bytes", "-1");
        // Mirrors lose whole segments below their share-partitions' starts: smaller segments
        // keep less that is read no more.
        raw.putIfAbsent("log.segment.bytes", String.valueOf(64 * 1024 * 1024));
        return raw;
    }

    private static String describeListeners(BrokerConfig config, NodeInfo node) {
        StringBuilder out = new StringBuilder();
        for (ListenerSpec spec : config.listeners()) {
            NodeInfo.Address a = node.listeners().get(spec.name());
            out.append(out.isEmpty() ? "" : ", ").append(spec.name()).append("://").append(a.host()).append(':')
                    .append(a.port());
            if (!spec.name().equals(spec.protocol().name)) {
                out.append(" (").append(spec.protocol().name).append(')');
            }
        }
        return out.toString();
    }

    /** Waits for every partition log to open; a damaged log fails the start with its own exception. */
    private static void awaitOpen(BrokerServices services) throws Exception {
        try {
            services.open().get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** The bound metrics port, or -1 when metrics are off. */
    int metricsPort() {
        return metricsEndpoint == null ? -1 : metricsEndpoint.port();
    }

    private static void stopAfterFailedStart(Deque<AutoCloseable> started, Throwable cause) {
        while (!started.isEmpty()) {
            try {
                started.pop().close();
            } catch (Exception e) {
                cause.addSuppressed(e);
            }
        }
    }

    private void closeListener() {
        try {
            listener.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("Stopping the network failed", e);
        }
    }

    NodeInfo node() {
        return node;
    }

    /**
     * Stops the broker after a storage failure, once: several agents usually fail together (a dead
     * disk fails every log), and {@code onFatalExit} must run after the close has finished, not
     * when a second failure finds the close already begun.
     */
    private void onFatal(String what, Throwable cause) {
        if (!failed.compareAndSet(false, true)) {
            LOG.error("FATAL as well: {}", what, cause);
            return;
        }
        LOG.error("FATAL: {}; the broker stops acknowledging and shuts down. Restart recovers from disk.", what, cause);
        Thread stopper = new Thread(() -> {
            close();
            onFatalExit.run();
        }, "pier-fatal-shutdown");
        stopper.start();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (metricsEndpoint != null) {
            metricsEndpoint.close();
            console.close();
        }
        closeListener(); // the network: stops accepting, closes the connections
        if (membership != null) {
            membership.close(); // leaves the gateway group: the other nodes take its state over at once
            gatewayConfigs.close();
            peers.close();
        }
        services.close();
        while (!gatewayClients.isEmpty()) {
            try {
                gatewayClients.pop().close();
            } catch (Exception e) {
                LOG.warn("Stopping a client of the upstream failed", e);
            }
        }
        if (upstream != null) {
            upstream.close();
        }
        try {
            shareStateRunner.close(); // writes what the shards submitted last, then closes the share-state log
        } catch (Exception e) {
            LOG.warn("Stopping the share-state agents failed", e);
        }
        try {
            dataLock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("Releasing the data folder lock failed", e);
        }
        LOG.info("Pier broker {} stopped", node == null ? config.nodeId() : node.nodeId());
    }
}
