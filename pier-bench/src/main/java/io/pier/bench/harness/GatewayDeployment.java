package io.pier.bench.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Pier gateway nodes of one deployment over one upstream: their own gateway group, state topic and
 * config topic on the upstream (named after the deployment), so no deployment of a run replays
 * another's share state or joins another's group. Node ids from 1; ports fixed per node, so a
 * killed node comes back where its clients last saw it.
 */
final class GatewayDeployment implements AutoCloseable {
    final String name;
    private final Path dir;
    private final List<String> jvmFlags;
    private final String classpath;
    private final Path archive;
    private final String upstream;
    private final Map<String, String> settings;
    /** The live process of each node id, in id order. */
    private final Map<Integer, PierGateway> nodes = new TreeMap<>();
    private final Map<Integer, Integer> restarts = new TreeMap<>();

    private GatewayDeployment(String name, Path dir, List<String> jvmFlags, String classpath, Path archive,
            String upstream, Map<String, String> settings) {
        this.name = name;
        this.dir = dir;
        this.jvmFlags = jvmFlags;
        this.classpath = classpath;
        this.archive = archive;
        this.upstream = upstream;
        this.settings = settings;
    }

    /**
     * Starts {@code count} nodes one after the other (each answering before the next starts), then
     * waits until they have split the state partitions: see {@link #awaitSettled}.
     *
     * @param sessionTimeoutMs {@code pier.gateway.session.timeout.ms}, or 0 for the default
     */
    static GatewayDeployment start(String name, int count, Path dir, List<String> jvmFlags, String classpath,
            Path archive, String upstream, int sessionTimeoutMs, String probeTopic) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("pier.gateway.group.id", "pier-gateway-" + name);
        settings.put("pier.gateway.state.topic", "__pier_share_state_" + name);
        settings.put("pier.gateway.config.topic", "__pier_group_configs_" + name);
        if (sessionTimeoutMs > 0) {
            settings.put("pier.gateway.session.timeout.ms", Integer.toString(sessionTimeoutMs));
        }
        GatewayDeployment d = new GatewayDeployment(name, dir, jvmFlags, classpath, archive, upstream, settings);
        try {
            for (int id = 1; id <= count; id++) {
                d.startNode(id, BrokerProcess.freePort(), name + "-node" + id);
            }
            d.awaitSettled(probeTopic, Duration.ofSeconds(90));
        } catch (Exception e) {
            d.close();
            throw e;
        }
        return d;
    }

    private PierGateway startNode(int id, int port, String processName) throws Exception {
        PierGateway node = new PierGateway(processName, jvmFlags, dir.resolve(processName), classpath, archive, id,
                upstream, settings, port);
        nodes.put(id, node);
        long ms = node.start(List.of());
        SideBySide.log("  " + processName + " (node " + id + ", port " + port + ") answered after " + ms + " ms");
        return node;
    }

    /** A killed node's id started again on its port, with an empty data folder (mirrors are caches). */
    PierGateway restart(int id) throws Exception {
        PierGateway old = nodes.get(id);
        int n = restarts.merge(id, 1, Integer::sum);
        String processName = name + "-node" + id + "-restart" + n;
        try {
            return startNode(id, old.port, processName);
        } catch (IllegalStateException e) {
            // The port was not free again yet (a socket of the killed process lingering): another port.
            SideBySide.log("  " + processName + " could not start on port " + old.port + " (" + e.getMessage()
                    + "); starting it on a new port");
            return startNode(id, BrokerProcess.freePort(), processName + "b");
        }
    }

    PierGateway node(int id) {
        return nodes.get(id);
    }

    Collection<PierGateway> nodes() {
        return nodes.values();
    }

    /** Every node's address, for clients that bootstrap on all of them. */
    String bootstrap() {
        return nodes.values().stream().map(BrokerProcess::bootstrap).collect(Collectors.joining(","));
    }

    /** The addresses of every node but {@code id}. */
    String bootstrapWithout(int id) {
        return nodes.values().stream().filter(n -> n.nodeId != id).map(BrokerProcess::bootstrap)
                .collect(Collectors.joining(","));
    }

    /** The gateway nodes' JIT compiler threads' CPU time so far, summed; -1 if any is unreadable. */
    long jitCpuNanos() {
        return summed(PierGateway::jitCpuNanos);
    }

    /** The gateway nodes' CPU time so far, summed; -1 if any is unreadable. */
    long cpuNanos() {
        return summed(PierGateway::cpuNanos);
    }

    private long summed(java.util.function.ToLongFunction<PierGateway> reading) {
        long sum = 0;
        for (PierGateway n : nodes.values()) {
            long c = reading.applyAsLong(n);
            if (c < 0) {
                return -1;
            }
            sum += c;
        }
        return sum;
    }

    Admin admin() {
        return admin(bootstrap());
    }

    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "bench-gateway-admin");
        p.put("request.timeout.ms", "5000");
        p.put("default.api.timeout.ms", "10000");
        return Admin.create(p);
    }

    /** Partition → id of the gateway node leading it (-1: none), as {@code admin}'s node answers. */
    static Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
        Map<Integer, Integer> out = new TreeMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    /**
     * Waits until every node is a broker of the cluster the nodes describe, every partition of
     * {@code topic} is led by one of them, and that map has not changed for 2 s (the nodes join
     * one at a time, and each join moves state partitions); returns the map.
     */
    Map<Integer, Integer> awaitSettled(String topic, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<Integer, Integer> last = null;
        long sameSince = 0;
        String lastProblem = "";
        try (Admin admin = admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    List<Integer> ids = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream()
                            .map(Node::id).sorted().toList();
                    Map<Integer, Integer> leaders = leaders(admin, topic);
                    boolean ok = ids.equals(new ArrayList<>(nodes.keySet()))
                            && leaders.values().stream().allMatch(nodes::containsKey);
                    if (ok && leaders.equals(last)) {
                        if (System.nanoTime() - sameSince >= TimeUnit.SECONDS.toNanos(2)) {
                            return leaders;
                        }
                    } else {
                        last = ok ? leaders : null;
                        sameSince = System.nanoTime();
                        lastProblem = "cluster " + ids + ", leaders " + leaders;
                    }
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    lastProblem = SideBySide.rootCause(e);
                    last = null;
                }
                Thread.sleep(250);
            }
        }
        throw new IllegalStateException(name + ": the gateway nodes did not settle in " + timeout.toSeconds()
                + " s; last seen: " + lastProblem);
    }

    /** How many partitions each node leads, e.g. {@code node 1: 5, node 2: 4, node 3: 3}. */
    static String split(Map<Integer, Integer> leaders) {
        Map<Integer, Integer> count = new TreeMap<>();
        leaders.values().forEach(id -> count.merge(id, 1, Integer::sum));
        return count.entrySet().stream().map(e -> "node " + e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", "));
    }

    @Override
    public void close() throws InterruptedException {
        for (PierGateway n : nodes.values()) {
            n.close();
        }
    }

    @Override
    public String toString() {
        return name + " " + nodes.keySet();
    }
}
