package io.pier.server;

import io.pier.console.ConsoleSettings;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;

/**
 * Broker settings with Kafka's names, validated once at start-up. Settings owned by the engine
 * (log defaults, {@code group.share.*}) stay in {@link #raw()} and are parsed by their owners.
 */
public final class BrokerConfig {
    public static final String LISTENERS = "listeners";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    public static final String NODE_ID = "node.id";
    public static final String NUM_PARTITIONS = "num.partitions";
    public static final String AUTO_CREATE_TOPICS = "auto.create.topics.enable";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
    public static final String QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes";
    public static final String SHARDS = "pier.shards";
    public static final String CLUSTER_ID = "pier.cluster.id";
    public static final String RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String METRICS_ENABLE = "pier.metrics.enable";
    public static final String METRICS_HOST = "pier.metrics.host";
    public static final String METRICS_PORT = "pier.metrics.port";
    public static final String METRICS_SNAPSHOT_INTERVAL_MS = "pier.metrics.snapshot.interval.ms";
    public static final String AGENT_SPIN_US = "pier.agent.spin.us";
    public static final String QUOTA_WINDOW_NUM = "quota.window.num";
    /**
     * Settings of the gateway's client of its upstream cluster (issue 16): Kafka's client names
     * after this prefix; {@code pier.gateway.upstream.bootstrap.servers} turns gateway mode on.
     */
    public static final String GATEWAY_UPSTREAM_PREFIX = "pier.gateway.upstream.";
    public static final String GATEWAY_UPSTREAM_BOOTSTRAP = GATEWAY_UPSTREAM_PREFIX + "bootstrap.servers";
    /**
     * Settings of the client a gateway node asks the other gateway nodes with (their share state,
     * for Admin): Kafka's client names after this prefix, for the gateway nodes' own listeners.
     */
    public static final String GATEWAY_PEER_PREFIX = "pier.gateway.peer.";
    public static final String QUOTA_WINDOW_SIZE_SECONDS = "quota.window.size.seconds";
    /** Default metrics port (the JMX exporter's customary one); the embedded broker uses 0. */
    public static final int DEFAULT_METRICS_PORT = 9404;

    private final Map<String, String> raw;
    private final List<ListenerSpec> listeners;
    private final Path dataDir;
    private final int nodeId;
    private final int numPartitions;
    private final boolean autoCreateTopics;
    private final int socketRequestMaxBytes;
    private final long connectionsMaxIdleMs;
    private final long queuedMaxRequestBytes;
    private final int shards;
    private final long retentionCheckIntervalMs;
    private final boolean metricsEnabled;
    private final String metricsHost;
    private final int metricsPort;
    private final long metricsSnapshotIntervalMs;
    private final long agentSpinUs;
    private final int quotaWindowNum;
    private final int quotaWindowSizeSeconds;
    private final ConnectionLimitSettings connectionLimits;
    private final ConsoleSettings console;

    public BrokerConfig(Map<String, String> props) {
        this.raw = Collections.unmodifiableMap(new LinkedHashMap<>(props));
        this.listeners = List.copyOf(ListenerConfigs.parse(props));
        String dirs = props.getOrDefault(LOG_DIRS, props.getOrDefault(LOG_DIR, "data"));
        if (dirs.contains(",")) {
            throw new ConfigException(LOG_DIRS, dirs, "Pier keeps its data in exactly one folder");
        }
        this.dataDir = Path.of(dirs);
        this.nodeId = intIn(NODE_ID, props.getOrDefault(NODE_ID, "1"), 0, Integer.MAX_VALUE);
        this.numPartitions = intIn(NUM_PARTITIONS, props.getOrDefault(NUM_PARTITIONS, "1"), 1, 100_000);
        this.autoCreateTopics = bool(AUTO_CREATE_TOPICS, props.getOrDefault(AUTO_CREATE_TOPICS, "true"));
        this.socketRequestMaxBytes = intIn(SOCKET_REQUEST_MAX_BYTES,
                props.getOrDefault(SOCKET_REQUEST_MAX_BYTES, "104857600"), 1024, Integer.MAX_VALUE);
        this.queuedMaxRequestBytes = longIn(QUEUED_MAX_REQUEST_BYTES,
                props.getOrDefault(QUEUED_MAX_REQUEST_BYTES, "-1"), Long.MIN_VALUE, Long.MAX_VALUE);
        if (queuedMaxRequestBytes > 0 && queuedMaxRequestBytes < socketRequestMaxBytes) {
            // Kafka's start-up check: a request as large as allowed must fit in the budget.
            throw new ConfigException(QUEUED_MAX_REQUEST_BYTES + " must be larger or equal to "
                    + SOCKET_REQUEST_MAX_BYTES + " (" + socketRequestMaxBytes + "), or at most 0 for no limit; got "
                    + queuedMaxRequestBytes);
        }
        this.connectionsMaxIdleMs = longIn(CONNECTIONS_MAX_IDLE_MS,
                props.getOrDefault(CONNECTIONS_MAX_IDLE_MS, "600000"), 1, Long.MAX_VALUE);
        this.shards = intIn(SHARDS, props.getOrDefault(SHARDS,
                String.valueOf(Runtime.getRuntime().availableProcessors())), 1, 256);
        this.retentionCheckIntervalMs = longIn(RETENTION_CHECK_INTERVAL_MS,
                props.getOrDefault(RETENTION_CHECK_INTERVAL_MS, "300000"), 1, Long.MAX_VALUE);
        this.metricsEnabled = bool(METRICS_ENABLE, props.getOrDefault(METRICS_ENABLE, "true"));
        this.metricsHost = props.getOrDefault(METRICS_HOST, "127.0.0.1").trim();
        if (metricsHost.isEmpty()) {
            throw new ConfigException(METRICS_HOST, metricsHost, "expected a host name or address");
        }
        this.metricsPort = intIn(METRICS_PORT,
                props.getOrDefault(METRICS_PORT, String.valueOf(DEFAULT_METRICS_PORT)), 0, 65535);
        this.metricsSnapshotIntervalMs = longIn(METRICS_SNAPSHOT_INTERVAL_MS,
                props.getOrDefault(METRICS_SNAPSHOT_INTERVAL_MS, "1000"), 10, 60_000);
        this.agentSpinUs = longIn(AGENT_SPIN_US, props.getOrDefault(AGENT_SPIN_US, "0"), 0, 10_000);
        this.quotaWindowNum = intIn(QUOTA_WINDOW_NUM, props.getOrDefault(QUOTA_WINDOW_NUM, "11"), 1, 3600);
        this.quotaWindowSizeSeconds = intIn(QUOTA_WINDOW_SIZE_SECONDS,
                props.getOrDefault(QUOTA_WINDOW_SIZE_SECONDS, "1"), 1, 3600);
        this.connectionLimits = ConnectionLimitSettings.parse(props, listeners);
        this.console = ConsoleSettings.fromProperties(props);
    }

    static int intIn(String name, String value, int min, int max) {
        long v = longIn(name, value, min, max);
        return (int) v;
    }

    static long longIn(String name, String value, long min, long max) {
        long v;
        try {
            v = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(name, value, "not a number");
        }
        if (v < min || v > max) {
            throw new ConfigException(name, value, "must be between " + min + " and " + max);
        }
        return v;
    }

    static boolean bool(String name, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
            throw new ConfigException(name, value, "expected true or false");
        }
        return v.equals("true");
    }

    /** The web console's settings ({@code pier.console.*}); it is on when metrics are. */
    public ConsoleSettings console() {
        return console;
    }

    /** Samples a client quota's rate is measured over (Kafka's default 11). */
    public int quotaWindowNum() {
        return quotaWindowNum;
    }

    /** Length of one sample of a client quota's rate, seconds (Kafka's default 1). */
    public int quotaWindowSizeSeconds() {
        return quotaWindowSizeSeconds;
    }

    /** {@code max.connections}, its per-listener values and {@code max.connections.per.ip} (with overrides). */
    ConnectionLimitSettings connectionLimits() {
        return connectionLimits;
    }

    /** Every setting as given, including those parsed by engine components. */
    public Map<String, String> raw() {
        return raw;
    }

    /** True if this node is a gateway in front of an upstream cluster rather than a broker of its own. */
    public boolean gateway() {
        return raw.containsKey(GATEWAY_UPSTREAM_BOOTSTRAP);
    }

    /** The upstream client settings: every {@code pier.gateway.upstream.*} setting without the prefix. */
    public Map<String, Object> upstreamClientSettings() {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        raw.forEach((k, v) -> {
            if (k.startsWith(GATEWAY_UPSTREAM_PREFIX)) {
                out.put(k.substring(GATEWAY_UPSTREAM_PREFIX.length()), v);
            }
        });
        return out;
    }

    /**
     * The settings of a gateway node's client of the other gateway nodes: {@value #GATEWAY_PEER_PREFIX}
     * settings; it connects to the addresses the nodes advertise to each other, so its bootstrap
     * list is never used (it names this node's first listener).
     */
    public Map<String, Object> peerClientSettings() {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        out.put("bootstrap.servers", host() + ":" + port());
        raw.forEach((k, v) -> {
            if (k.startsWith(GATEWAY_PEER_PREFIX)) {
                out.put(k.substring(GATEWAY_PEER_PREFIX.length()), v);
            }
        });
        return out;
    }

    /** The listeners Pier serves, in the order of {@code listeners}; never empty. */
    public List<ListenerSpec> listeners() {
        return listeners;
    }

    /** The first listener's bind host. */
    public String host() {
        return listeners.get(0).host();
    }

    /** The first listener's bind port. */
    public int port() {
        return listeners.get(0).port();
    }

    public Path dataDir() {
        return dataDir;
    }

    public int nodeId() {
        return nodeId;
    }

    public int numPartitions() {
        return numPartitions;
    }

    public boolean autoCreateTopics() {
        return autoCreateTopics;
    }

    public int socketRequestMaxBytes() {
        return socketRequestMaxBytes;
    }

    /**
     * {@code queued.max.request.bytes}: the bytes of requests read and not yet answered, across all
     * connections, before no more are read; at most 0: no limit (Kafka's default, -1).
     */
    public long queuedMaxRequestBytes() {
        return queuedMaxRequestBytes;
    }

    public long connectionsMaxIdleMs() {
        return connectionsMaxIdleMs;
    }

    public int shards() {
        return shards;
    }

    public long retentionCheckIntervalMs() {
        return retentionCheckIntervalMs;
    }

    public boolean metricsEnabled() {
        return metricsEnabled;
    }

    public String metricsHost() {
        return metricsHost;
    }

    public int metricsPort() {
        return metricsPort;
    }

    /** How often each shard refreshes what the gauges show. */
    public long metricsSnapshotIntervalMs() {
        return metricsSnapshotIntervalMs;
    }

    /**
     * How long an agent's thread keeps looking for work after a cycle that did some, before it
     * parks (0, the default: park at once). See {@code AgentRunner}.
     */
    public long agentSpinUs() {
        return agentSpinUs;
    }
}
