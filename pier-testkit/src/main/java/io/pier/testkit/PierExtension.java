package io.pier.testkit;

import io.pier.gateway.GatewayState;
import io.pier.server.Pier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs an in-process Pier broker on 127.0.0.1 with an ephemeral port and
 * a temporary data folder, for the whole test class:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PierExtension PIER = PierExtension.withConfig("num.partitions", "3");
 * ... props.put("bootstrap.servers", PIER.bootstrapServers());
 * }</pre>
 *
 * {@link #restart()} stops the broker and starts a new one on the same data folder and port, for
 * tests of what survives a restart.
 *
 * <p>With the system property {@code pier.testkit.gateway=true} every such broker is a gateway
 * node (docs/scale-out.md) in front of its own {@link UpstreamKafka}, started with it and stopped
 * after it: the same tests then show the same behaviour through a gateway (pier-testkit's
 * {@code gateway-suite} profile runs the share-group suite that way). With
 * {@code pier.testkit.gateway.nodes=N} as well, it is N gateway nodes (ids 1..N) over that one
 * upstream, which split the share state between them: {@link #bootstrapServers()} names them all,
 * while {@link #pier()}, {@link #dataDir()} and {@link #restart()} are node 1's, which is then not
 * the whole cluster ({@link #multiNodeGateway()}).
 */
public final class PierExtension implements BeforeAllCallback, AfterAllCallback {
    /** Runs every extension's broker as a gateway in front of an upstream Kafka of its own. */
    public static final String GATEWAY_PROPERTY = "pier.testkit.gateway";
    /** In gateway mode, how many gateway nodes each extension runs over its upstream (1 by default). */
    public static final String GATEWAY_NODES_PROPERTY = "pier.testkit.gateway.nodes";
    /** How long the nodes may take to split the state partitions between them after a start. */
    private static final long SPLIT_WAIT_MS = 60_000;
    private final Map<String, String> configs = new LinkedHashMap<>();
    private Path dataDir;
    private Pier pier;
    /** Gateway nodes 2..N when there are several; node 1 is {@link #pier}. */
    private final List<Pier> others = new ArrayList<>();
    private UpstreamKafka upstream;

    public PierExtension() {}

    public static PierExtension withConfig(String... keyValues) {
        PierExtension ext = new PierExtension();
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("expected key, value pairs");
        }
        for (int i = 0; i < keyValues.length; i += 2) {
            ext.configs.put(keyValues[i], keyValues[i + 1]);
        }
        return ext;
    }

    public PierExtension config(String key, String value) {
        configs.put(key, value);
        return this;
    }

    /** How many brokers an extension runs: {@link #GATEWAY_NODES_PROPERTY} in gateway mode, else 1. */
    public static int nodeCount() {
        if (!Boolean.getBoolean(GATEWAY_PROPERTY)) {
            return 1;
        }
        return Math.max(1, Integer.getInteger(GATEWAY_NODES_PROPERTY, 1));
    }

    /** True when extensions run gateway nodes in front of an Apache Kafka (the gateway-suite profile). */
    public static boolean gateway() {
        return Boolean.getBoolean(GATEWAY_PROPERTY);
    }

    /**
     * True when extensions run several gateway nodes: a test that reads one broker's internals
     * (its metrics, its data folder) or restarts it as if it were the cluster does not hold then.
     */
    public static boolean multiNodeGateway() {
        return nodeCount() > 1;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    /** Starts the broker; {@link #beforeAll} does this for registered extensions. */
    public void start() throws Exception {
        dataDir = Files.createTempDirectory("pier-test-");
        if (Boolean.getBoolean(GATEWAY_PROPERTY) && upstream == null) {
            upstream = UpstreamKafka.builder().start();
            configs.put("pier.gateway.upstream.bootstrap.servers", upstream.bootstrapServers());
        }
        if (!multiNodeGateway()) {
            pier = Pier.builder().configs(configs).dataDir(dataDir).start();
            return;
        }
        boolean started = false;
        try {
            pier = Pier.builder().configs(configs).config("node.id", "1").dataDir(dataDir).start();
            for (int id = 2; id <= nodeCount(); id++) {
                // their data folders are temporary: a gateway node keeps only caches there
                others.add(Pier.builder().configs(configs).config("node.id", String.valueOf(id)).start());
            }
            awaitSplit();
            started = true;
        } finally {
            if (!started) {
                stop();
            }
        }
    }

    /**
     * Waits until the gateway nodes have split the state partitions between them: every node is a
     * broker of the cluster, every partition of the state topic has a leader, as each node tells
     * it, and every node serves what the split gave it. Before that a node lists only itself, or names no leader for the partitions on
     * their way to another node, and a test would race that first split instead of testing.
     */
    private void awaitSplit() throws Exception {
        Set<Integer> ids = IntStream.rangeClosed(1, nodeCount()).boxed().collect(Collectors.toCollection(TreeSet::new));
        String stateTopic = configs.getOrDefault(GatewayState.TOPIC, "__pier_share_state");
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SPLIT_WAIT_MS);
        List<Pier> all = nodes();
        String last = "nothing asked yet";
        for (Pier node : all) {
            try (Admin admin = Admin.create(Map.<String, Object>of(
                    AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrapServers(),
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000,
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000))) {
                while (true) {
                    try {
                        Set<Integer> brokers = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream()
                                .map(Node::id).collect(Collectors.toCollection(TreeSet::new));
                        TopicDescription d = admin.describeTopics(List.of(stateTopic)).allTopicNames()
                                .get(10, TimeUnit.SECONDS).get(stateTopic);
                        List<Integer> leaders = d.partitions().stream()
                                .map(TopicPartitionInfo::leader).map(l -> l == null ? -1 : l.id()).toList();
                        last = "brokers " + brokers + ", leaders of " + stateTopic + " " + leaders;
                        if (brokers.equals(ids) && leaders.stream().allMatch(ids::contains)) {
                            // A node is named owner a moment before it has taken its state
                            // partitions over; ListGroups, asked of every node, fails until each has.
                            admin.listGroups(ListGroupsOptions.forShareGroups()).all().get(10, TimeUnit.SECONDS);
                            break;
                        }
                    } catch (ExecutionException | TimeoutException e) {
                        last = e.toString();
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("gateway nodes " + ids + " did not split the state within "
                                + SPLIT_WAIT_MS + " ms; through " + node.bootstrapServers() + ": " + last);
                    }
                    Thread.sleep(100);
                }
            }
        }
    }

    /** The upstream Kafka in gateway mode ({@link #GATEWAY_PROPERTY}), else null. */
    public UpstreamKafka upstream() {
        return upstream;
    }

    /** host:port of every node, node 1 first. */
    public String bootstrapServers() {
        return nodes().stream().map(Pier::bootstrapServers).collect(Collectors.joining(","));
    }

    /** host:port of the named listener, for a broker with several (of every node, node 1 first). */
    public String bootstrapServers(String listenerName) {
        return nodes().stream().map(n -> n.bootstrapServers(listenerName)).collect(Collectors.joining(","));
    }

    /** The broker; with several gateway nodes, node 1. */
    public Pier pier() {
        return pier;
    }

    /** The broker's data folder; with several gateway nodes, node 1's. */
    public Path dataDir() {
        return dataDir;
    }

    /** Every node's metrics port, node 1 first (one with a single broker). */
    public List<Integer> metricsPorts() {
        return nodes().stream().map(Pier::metricsPort).toList();
    }

    /** Node 1, then the others. */
    private List<Pier> nodes() {
        List<Pier> all = new ArrayList<>();
        all.add(pier);
        all.addAll(others);
        return all;
    }

    /**
     * Stops the broker cleanly and starts it again on the same data and port; with several gateway
     * nodes, node 1 only, and returns once the nodes have split the state again.
     */
    public void restart() throws Exception {
        int port = pier.port();
        pier.close();
        if (!multiNodeGateway()) {
            pier = Pier.builder().configs(configs).dataDir(dataDir).port(port).start();
            return;
        }
        pier = Pier.builder().configs(configs).config("node.id", "1").dataDir(dataDir).port(port).start();
        awaitSplit();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    public void stop() {
        others.forEach(Pier::close);
        others.clear();
        if (pier != null) {
            pier.close();
            pier = null;
        }
        if (upstream != null) {
            try {
                upstream.close();
            } catch (IOException e) {
                // its temporary folder may be left behind; nothing else is
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            upstream = null;
            configs.remove("pier.gateway.upstream.bootstrap.servers");
        }
        if (dataDir != null) {
            try (Stream<Path> walk = Files.walk(dataDir)) {
                walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // leftover temp files do not affect other tests
            }
            dataDir = null;
        }
    }
}
