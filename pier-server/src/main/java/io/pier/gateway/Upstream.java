package io.pier.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.utils.Utils;

/**
 * The upstream cluster as the gateway's handlers use it: where to send a request (a partition's
 * leader, a group's or a transactional id's coordinator, any broker), the API versions it serves,
 * and the sending itself ({@link UpstreamClient}).
 *
 * <p>The routing view is refreshed from the upstream's Metadata: every Metadata answer a client's
 * forwarded request brings back is merged in ({@link #learn}), a full refresh runs when a request
 * names a partition the view does not know or an answer says a leader moved, and at most one
 * refresh is in flight. Coordinators are looked up with FindCoordinator and remembered until an
 * answer says the coordinator moved ({@link #forgetCoordinator}); the client, told
 * NOT_COORDINATOR as it would be by the upstream, asks again.
 */
public final class Upstream implements AutoCloseable {
    /** Kafka's FindCoordinator key types. */
    static final byte GROUP = 0;
    static final byte TRANSACTION = 1;

    private record CoordinatorKey(byte type, String key) {}

    private final UpstreamClient client;
    private final List<Node> bootstrap;
    private final AtomicReference<UpstreamView> view = new AtomicReference<>(UpstreamView.EMPTY);
    private final AtomicReference<CompletableFuture<UpstreamView>> refreshing = new AtomicReference<>();
    private final Map<CoordinatorKey, Node> coordinators = new ConcurrentHashMap<>();
    private final AtomicInteger next = new AtomicInteger();
    private volatile NodeApiVersions versions;

    private Upstream(UpstreamClient client, List<Node> bootstrap) {
        this.client = client;
        this.bootstrap = bootstrap;
    }

    /**
     * Connects to the upstream and reads its metadata and API versions; fails if it cannot within
     * {@code timeout}, with the upstream's error or the address it could not reach.
     */
    public static Upstream connect(Map<String, Object> settings, Duration timeout) throws Exception {
        AdminClientConfig config = new AdminClientConfig(settings);
        List<Node> bootstrap = new ArrayList<>();
        int id = -1;
        for (String address : config.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG)) {
            String host = Utils.getHost(address);
            Integer port = Utils.getPort(address);
            if (host == null || port == null) {
                throw new IllegalArgumentException("pier.gateway.upstream.bootstrap.servers: not host:port: " + address);
            }
            bootstrap.add(new Node(id--, host, port));
        }
        UpstreamClient client = new UpstreamClient(settings);
        Upstream upstream = new Upstream(client, List.copyOf(bootstrap));
        client.knownNodes(bootstrap);
        try {
            upstream.refresh().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
            client.close();
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            List<String> at = config.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
            if (cause instanceof AuthenticationException) {
                // Reached, but the login or the TLS handshake failed: point at the settings to fix,
                // not at the network.
                throw new IllegalStateException("authentication with the upstream cluster at " + at + " failed"
                        + " (see the pier.gateway.upstream. security settings: security.protocol, sasl.*, ssl.*): "
                        + cause, cause);
            }
            throw new IllegalStateException("cannot reach the upstream cluster at " + at + ": " + cause, cause);
        }
        return upstream;
    }

    /** When (System.nanoTime) the upstream last answered this node: see {@link ServingLease}. */
    public long lastAnswerNanos() {
        return client.lastAnswerNanos();
    }

    /** The current routing view. */
    UpstreamView view() {
        return view.get();
    }

    /** The upstream's cluster id, which the gateway reports as its own. */
    public String clusterId() {
        return view.get().clusterId();
    }

    /** The API versions the upstream serves (those of the broker first asked). */
    NodeApiVersions versions() {
        return versions;
    }

    /** A broker to send a request any broker can answer; spread over the known ones. */
    Node anyBroker() {
        List<Node> brokers = view.get().brokerList();
        List<Node> from = brokers.isEmpty() ? bootstrap : brokers;
        return from.get(Math.floorMod(next.getAndIncrement(), from.size()));
    }

    /** Every known broker, for requests answered per broker (ListGroups, ListTransactions). */
    List<Node> allBrokers() {
        List<Node> brokers = view.get().brokerList();
        return brokers.isEmpty() ? bootstrap : brokers;
    }

    /** Connections to one upstream broker beside its first: one for the mirrors, the rest for clients' fetches. */
    static final int FETCH_LANES = 8;
    static final int MIRROR_LANE = FETCH_LANES + 1;

    /**
     * {@code broker} under another connection. An upstream broker answers the requests of one
     * connection one at a time, so a long-polling Fetch (a consumer at the end of a partition, a
     * mirror waiting for records) holds every request behind it on that connection: forwarded
     * fetches go over lanes of their own, one per client connection's hash, and the mirrors over
     * one more, while everything else keeps lane 0, the broker itself.
     */
    static Node lane(Node broker, int lane) {
        if (lane == 0) {
            return broker;
        }
        return new Node(1_000_000_000 + broker.id() * 64 + lane, broker.host(), broker.port(), broker.rack());
    }

    /** Forwards a client's request at its version. */
    CompletableFuture<AbstractResponse> send(Node node, AbstractRequest body, String clientId) {
        return client.send(node, body, clientId);
    }

    CompletableFuture<AbstractResponse> send(Node node, AbstractRequest body, String clientId, int timeoutMs) {
        return client.send(node, body, clientId, timeoutMs);
    }

    int requestTimeoutMs() {
        return client.requestTimeoutMs();
    }

    /** Merges a Metadata answer a forwarded request brought back. */
    void learn(MetadataResponse answer, boolean allTopics) {
        UpstreamView merged = view.updateAndGet(v -> v.merge(answer.data(), allTopics));
        client.knownNodes(merged.brokerList());
    }

    /**
     * Reads the upstream's metadata for every topic, once however many ask at the same time;
     * completes with the new view.
     */
    CompletableFuture<UpstreamView> refresh() {
        CompletableFuture<UpstreamView> mine = new CompletableFuture<>();
        CompletableFuture<UpstreamView> running = refreshing.compareAndExchange(null, mine);
        if (running != null) {
            return running;
        }
        Node node = anyBroker();
        MetadataRequest.Builder request = new MetadataRequest.Builder(
                new MetadataRequestData().setTopics(null).setAllowAutoTopicCreation(false));
        var unused = client.send(node, request).whenComplete((answer, failure) -> {
            refreshing.set(null);
            if (failure != null) {
                mine.completeExceptionally(failure);
                return;
            }
            if (versions == null) {
                versions = client.versionsOf(node);
            }
            learn((MetadataResponse) answer, true);
            mine.complete(view.get());
        });
        return mine;
    }

    /** The coordinator of a group ({@link #GROUP}) or transactional id ({@link #TRANSACTION}). */
    CompletableFuture<Node> coordinator(byte type, String key) {
        CoordinatorKey k = new CoordinatorKey(type, key);
        Node known = coordinators.get(k);
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        FindCoordinatorRequest.Builder request = new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData()
                .setKeyType(type).setCoordinatorKeys(List.of(key)));
        return client.send(anyBroker(), request).thenApply(answer -> {
            FindCoordinatorResponseData data = ((FindCoordinatorResponse) answer).data();
            Errors error;
            Node node;
            if (data.coordinators().isEmpty()) {
                error = Errors.forCode(data.errorCode());
                node = new Node(data.nodeId(), data.host(), data.port());
            } else {
                FindCoordinatorResponseData.Coordinator c = data.coordinators().get(0);
                error = Errors.forCode(c.errorCode());
                node = new Node(c.nodeId(), c.host(), c.port());
            }
            if (error != Errors.NONE) {
                throw error.exception();
            }
            coordinators.put(k, node);
            return node;
        });
    }

    /** Forgets a coordinator an answer said has moved (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE). */
    void forgetCoordinator(byte type, String key) {
        coordinators.remove(new CoordinatorKey(type, key));
    }

    /** Runs {@code task} on the upstream thread (see {@link UpstreamClient#execute}). */
    void execute(Runnable task) {
        client.execute(task);
    }

    /** Runs {@code task} on the upstream thread after {@code delayMs}. */
    void schedule(long delayMs, Runnable task) {
        client.schedule(delayMs, task);
    }

    /** Sends the gateway's own request to {@code node}. */
    CompletableFuture<AbstractResponse> send(Node node, AbstractRequest.Builder<?> request) {
        return client.send(node, request);
    }

    /**
     * The upstream's offset for {@code timestamp} in {@code tp} (ListOffsets at its leader):
     * {@link ListOffsetsRequest#EARLIEST_TIMESTAMP}, {@link ListOffsetsRequest#LATEST_TIMESTAMP}
     * (the high watermark) or a time, for which the end comes back when no record is that new.
     */
    CompletableFuture<Long> listOffset(TopicPartition tp, long timestamp) {
        Node leader = view().leader(tp);
        if (leader == null) {
            return refresh().thenCompose(v -> {
                Node now = v.leader(tp);
                return now == null ? CompletableFuture.failedFuture(Errors.LEADER_NOT_AVAILABLE.exception(
                        "no upstream leader for " + tp)) : listOffset(now, tp, timestamp);
            });
        }
        return listOffset(leader, tp, timestamp);
    }

    private CompletableFuture<Long> listOffset(Node leader, TopicPartition tp, long timestamp) {
        ListOffsetsRequestData data = new ListOffsetsRequestData().setReplicaId(-1)
                .setIsolationLevel(IsolationLevel.READ_UNCOMMITTED.id());
        data.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName(tp.topic())
                .setPartitions(new ArrayList<>(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                        .setPartitionIndex(tp.partition()).setTimestamp(timestamp)))));
        return client.send(leader, Messages.builder(ApiKeys.LIST_OFFSETS, (short) 1, v -> data)).thenCompose(answer -> {
            ListOffsetsResponseData.ListOffsetsPartitionResponse p =
                    ((ListOffsetsResponse) answer).data().topics().get(0).partitions().get(0);
            Errors error = Errors.forCode(p.errorCode());
            if (error != Errors.NONE) {
                if (error == Errors.NOT_LEADER_OR_FOLLOWER || error == Errors.UNKNOWN_TOPIC_OR_PARTITION) {
                    var unused = refresh();
                }
                return CompletableFuture.failedFuture(error.exception("ListOffsets of " + tp + " upstream"));
            }
            if (p.offset() < 0 && timestamp >= 0) {
                return listOffset(leader, tp, ListOffsetsRequest.LATEST_TIMESTAMP); // nothing that new yet
            }
            return CompletableFuture.completedFuture(p.offset());
        });
    }

    /** True if the upstream serves {@code api} (at any version). */
    boolean serves(ApiKeys api) {
        NodeApiVersions v = versions;
        return v != null && v.apiVersion(api) != null;
    }

    @Override
    public void close() {
        client.close();
    }
}
