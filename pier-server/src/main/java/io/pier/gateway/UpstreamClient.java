package io.pier.gateway;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's connections to the upstream cluster: one kafka-clients {@link NetworkClient} (the
 * one Admin and the consumers use: connection set-up, TLS and SASL from the upstream client
 * settings, ApiVersions on connect, in-flight limits, timeouts), owned by one thread,
 * {@code pier-upstream}. Other threads meet it only at its submission queue: {@link #send} queues a
 * request and wakes the thread, which sends it once the node's connection is ready and completes
 * the returned future from its poll.
 *
 * <pre>
 *   event loop ──send(node, request)──▶ [queue] ──▶ pier-upstream: ready(node)? ─▶ NetworkClient.send
 *        ▲                                                  poll ─▶ response ─▶ future completed
 *        └────────── thenApply on the upstream thread (rewrites are cheap), then the event loop writes
 * </pre>
 *
 * <p>A forwarded request is sent at exactly the version its client chose: the gateway advertises
 * only versions the upstream serves too, so the body parsed from the client is written again
 * unchanged, under the client's own client id (the upstream's quotas and logs see the real client).
 */
public final class UpstreamClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UpstreamClient.class);
    private static final long MAX_POLL_MS = 100;

    /** A request waiting for its node's connection, then in flight. */
    private record Pending(Node node, AbstractRequest.Builder<?> builder, String clientId, int timeoutMs,
            long deadlineMs, CompletableFuture<AbstractResponse> done) {}

    private final NetworkClient client;
    private final ManualMetadataUpdater nodes;
    private final ApiVersions apiVersions = new ApiVersions();
    private final Time time = Time.SYSTEM;
    private final int requestTimeoutMs;
    private final ConcurrentLinkedQueue<Pending> submitted = new ConcurrentLinkedQueue<>();
    /** Work other threads hand to the upstream thread ({@link #execute}). */
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Owned by the upstream thread: tasks waiting for their time ({@link #schedule}), soonest first. */
    private final java.util.PriorityQueue<Timer> timers = new java.util.PriorityQueue<>();
    private long timerSequence;

    private record Timer(long dueMs, long sequence, Runnable task) implements Comparable<Timer> {
        @Override
        public int compareTo(Timer o) {
            return dueMs != o.dueMs ? Long.compare(dueMs, o.dueMs) : Long.compare(sequence, o.sequence);
        }
    }
    /** Owned by the upstream thread: requests whose node is not connected yet. */
    private final List<Pending> waiting = new ArrayList<>();
    /** Owned by the upstream thread: requests sent and not yet answered. */
    private final java.util.Set<Pending> inFlight = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    /** When the upstream last answered a request (System.nanoTime): see {@link ServingLease}. */
    private volatile long lastAnswerNanos = System.nanoTime();
    /**
     * Correlation ids of forwarded requests. The NetworkClient matches each answer to the oldest
     * request in flight on its connection and checks the ids agree, so any id unique among those
     * in flight will do; they are ours because the request carries the client's client id.
     */
    private final AtomicInteger correlation = new AtomicInteger(1 << 30);
    private final Metrics metrics = new Metrics();
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param settings the upstream client settings (Admin's names: {@code bootstrap.servers},
     *     {@code security.protocol}, SASL and TLS settings, {@code request.timeout.ms}...)
     */
    public UpstreamClient(Map<String, Object> settings) {
        this(settings, "pier-upstream");
    }

    /**
     * @param name the client's thread and log name: {@code pier-peers} for the one a gateway
     *     node asks the other gateway nodes with ({@link PeerShareState})
     */
    public UpstreamClient(Map<String, Object> settings, String name) {
        AdminClientConfig config = new AdminClientConfig(settings);
        this.requestTimeoutMs = config.getInt(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG);
        this.nodes = new ManualMetadataUpdater();
        LogContext logContext = new LogContext("[" + name + "] ");
        this.client = ClientUtils.createNetworkClient(config,
                config.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG), "pier-gateway", metrics, name,
                logContext, apiVersions, time, 100, requestTimeoutMs, null, nodes, new DefaultHostResolver(), null,
                null);
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** The nodes {@link NetworkClient#leastLoadedNode} may pick from; called as the upstream's metadata changes. */
    void knownNodes(List<Node> known) {
        nodes.setNodes(known);
    }

    /** The API versions {@code node} advertised when it connected, or null before. */
    NodeApiVersions versionsOf(Node node) {
        return apiVersions.get(node.idString());
    }

    /** The default time a forwarded request may take ({@code request.timeout.ms}). */
    int requestTimeoutMs() {
        return requestTimeoutMs;
    }

    /**
     * Runs {@code task} on the upstream thread, in submission order: the owner thread of what
     * lives beside the connections (the mirrors' fetch state).
     */
    public void execute(Runnable task) {
        tasks.add(task);
        client.wakeup();
    }

    /** Runs {@code task} on the upstream thread once {@code delayMs} have passed (a retry's backoff). */
    public void schedule(long delayMs, Runnable task) {
        execute(() -> timers.add(new Timer(time.milliseconds() + delayMs, timerSequence++, task)));
    }

    /** Sends {@code body} to {@code node} under the default request timeout. */
    public CompletableFuture<AbstractResponse> send(Node node, AbstractRequest body, String clientId) {
        return send(node, body, clientId, requestTimeoutMs);
    }

    /**
     * Sends {@code body} at its own version to {@code node}. The future completes (on the upstream
     * thread) with the node's answer, with null for a request that expects none (acks=0), or
     * exceptionally: {@link DisconnectException} if the connection failed or dropped,
     * {@link TimeoutException} after {@code timeoutMs}, {@link UnsupportedVersionException} if the
     * node does not serve that version.
     */
    public CompletableFuture<AbstractResponse> send(Node node, AbstractRequest body, String clientId, int timeoutMs) {
        return submit(node, new ExactVersion(body), clientId, timeoutMs);
    }

    /**
     * Sends the gateway's own request (metadata, coordinator lookups) to {@code node}, at the
     * newest version both sides know, under the gateway's client id.
     */
    CompletableFuture<AbstractResponse> send(Node node, AbstractRequest.Builder<?> builder) {
        return submit(node, builder, "pier-gateway", requestTimeoutMs);
    }

    private CompletableFuture<AbstractResponse> submit(Node node, AbstractRequest.Builder<?> builder, String clientId,
            int timeoutMs) {
        CompletableFuture<AbstractResponse> done = new CompletableFuture<>();
        if (!running) {
            done.completeExceptionally(new DisconnectException("the gateway is stopping"));
            return done;
        }
        submitted.add(new Pending(node, builder, clientId == null ? "" : clientId, timeoutMs,
                time.milliseconds() + timeoutMs, done));
        client.wakeup();
        return done;
    }

    private void run() {
        try {
            while (running) {
                long now = time.milliseconds();
                for (Runnable task; (task = tasks.poll()) != null; ) {
                    runTask(task);
                }
                while (!timers.isEmpty() && timers.peek().dueMs() <= now) {
                    runTask(timers.poll().task());
                }
                for (Pending p; (p = submitted.poll()) != null; ) {
                    waiting.add(p);
                }
                long pollMs = sendReady(now);
                if (!timers.isEmpty()) {
                    pollMs = Math.min(pollMs, Math.max(0, timers.peek().dueMs() - now));
                }
                if (!tasks.isEmpty()) {
                    pollMs = 0; // a task queued by one that just ran: no sleeping past it
                }
                client.poll(Math.min(pollMs, MAX_POLL_MS), now);
            }
        } catch (RuntimeException | Error e) {
            LOG.error("The upstream client thread failed; forwarded requests fail from now on", e);
        } finally {
            running = false;
            failAll(new DisconnectException("the gateway's upstream client stopped"));
        }
    }

    private static void runTask(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("A task on the upstream thread failed", e);
        }
    }

    /** Sends what can be sent; returns how long the poll may wait. */
    private long sendReady(long now) {
        long pollMs = MAX_POLL_MS;
        for (Iterator<Pending> it = waiting.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (client.ready(p.node(), now)) {
                it.remove();
                dispatch(p, now);
            } else if (now >= p.deadlineMs()) {
                it.remove();
                p.done().completeExceptionally(new TimeoutException("no connection to upstream node " + p.node()
                        + " within " + p.timeoutMs() + " ms"));
            } else if (client.connectionFailed(p.node()) && client.connectionDelay(p.node(), now) > 0) {
                it.remove();
                // A failed authentication (a wrong SASL password, a certificate not trusted) says
                // so: as a mere disconnect it would read like an unreachable upstream.
                AuthenticationException refused = client.authenticationException(p.node());
                p.done().completeExceptionally(refused != null ? refused
                        : new DisconnectException("cannot connect to upstream node " + p.node()));
            } else {
                pollMs = Math.min(pollMs, Math.max(1, client.connectionDelay(p.node(), now)));
            }
        }
        return pollMs;
    }

    private void dispatch(Pending p, long now) {
        boolean expectResponse = !(p.builder() instanceof ExactVersion exact && exact.acksZero());
        ClientRequest request = new ClientRequest(p.node().idString(), p.builder(), correlation.getAndIncrement(),
                p.clientId(), now, expectResponse, p.timeoutMs(), response -> complete(p, response));
        try {
            inFlight.add(p);
            client.send(request, now);
        } catch (RuntimeException e) {
            inFlight.remove(p);
            p.done().completeExceptionally(e);
        }
    }

    private void complete(Pending p, ClientResponse response) {
        inFlight.remove(p);
        if (response.versionMismatch() != null) {
            p.done().completeExceptionally(response.versionMismatch());
        } else if (response.wasTimedOut()) {
            p.done().completeExceptionally(new TimeoutException("upstream node " + p.node() + " did not answer "
                    + p.builder().apiKey() + " within " + p.timeoutMs() + " ms"));
        } else if (response.wasDisconnected()) {
            p.done().completeExceptionally(new DisconnectException("upstream node " + p.node()
                    + " disconnected before answering " + p.builder().apiKey()));
        } else {
            lastAnswerNanos = System.nanoTime();
            p.done().complete(response.responseBody());
        }
    }

    private void failAll(RuntimeException cause) {
        for (Pending p : waiting) {
            p.done().completeExceptionally(cause);
        }
        waiting.clear();
        for (Pending p : List.copyOf(inFlight)) {
            p.done().completeExceptionally(cause);
        }
        inFlight.clear();
        for (Pending p; (p = submitted.poll()) != null; ) {
            p.done().completeExceptionally(cause);
        }
    }

    /** When (System.nanoTime) an upstream node last answered a request; the start if none has. */
    public long lastAnswerNanos() {
        return lastAnswerNanos;
    }

    @Override
    public void close() {
        running = false;
        client.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        client.close();
        metrics.close();
    }

    /** Builds the body it was given, at that body's version only. */
    private static final class ExactVersion extends AbstractRequest.Builder<AbstractRequest> {
        private final AbstractRequest body;

        ExactVersion(AbstractRequest body) {
            super(body.apiKey(), body.version(), body.version());
            this.body = body;
        }

        boolean acksZero() {
            return body instanceof org.apache.kafka.common.requests.ProduceRequest p && p.acks() == 0;
        }

        @Override
        public AbstractRequest build(short version) {
            return body;
        }

        @Override
        public String toString() {
            return body.apiKey() + " v" + body.version();
        }
    }
}
