package io.pier.gateway;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.pier.service.BrokerServices;
import io.pier.service.Futures;
import io.pier.state.DurableSharePersister;

/**
 * A gateway node's membership in the group of gateway nodes of its upstream, kept with Kafka's
 * own classic group protocol on the upstream (as Kafka Connect workers do): a consumer that
 * subscribes to the state topic and never reads it, on its own thread ({@code pier-gateway-group}),
 * whose assignment (by {@link StatePartitionAssignor}) says which state partitions this node
 * serves. A node that stops leaves the group at once; one that dies is removed by the others as
 * soon as its port refuses connections ({@link PeerWatch}); one that is paused or cut off after
 * {@code pier.gateway.session.timeout.ms} (and a cut-off one stops serving by itself, see
 * {@link ServingLease}). The survivors take its state partitions over: each opening fences the old
 * writer, and the records it had handed out are available again at once.
 *
 * <pre>
 *   assigned p ──▶ GatewayState.take(p): fence, replay ──▶ the engine lists p's share-partitions
 *   revoked / lost p ──▶ the engine drops p's share-partitions and their sessions ──▶ release(p)
 * </pre>
 */
public final class GatewayMembership implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayMembership.class);
    public static final String GROUP_ID = "pier.gateway.group.id";
    public static final String SESSION_TIMEOUT_MS = "pier.gateway.session.timeout.ms";
    /** How often the other nodes are probed for a dead process ({@link PeerWatch}); 0 turns it off. */
    public static final String PROBE_INTERVAL_MS = "pier.gateway.liveness.probe.interval.ms";
    static final String DEFAULT_GROUP_ID = "pier-gateway";
    static final int DEFAULT_SESSION_TIMEOUT_MS = 10_000;
    private static final Duration POLL = Duration.ofMillis(200);
    /** kafka-clients' counts of the coordinator's answers (recorded when a response arrives). */
    private static final Set<String> ANSWER_COUNTS = Set.of("heartbeat-total", "join-total", "sync-total");

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final GatewayState state;
    private final BrokerServices services;
    private final GatewayTopics topics;
    private final BiConsumer<String, Throwable> fatal;
    private final int sessionTimeoutMs;
    private final Thread thread;
    private final GatewayCluster cluster;
    /** When the node's other upstream requests were last answered (System.nanoTime). */
    private final LongSupplier lastUpstreamAnswer;
    private final ServingLease lease;
    private final PeerWatch peers;
    /** State partitions whose writes the upstream ended, to give up on the membership thread. */
    private final java.util.Queue<Integer> lost = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile boolean running = true;

    private GatewayMembership(KafkaConsumer<byte[], byte[]> consumer, GatewayState state, BrokerServices services,
            GatewayCluster cluster, LongSupplier lastUpstreamAnswer, PeerWatch peers,
            BiConsumer<String, Throwable> fatal, int sessionTimeoutMs) {
        this.consumer = consumer;
        this.state = state;
        this.services = services;
        this.cluster = cluster;
        this.topics = cluster.topics();
        this.lastUpstreamAnswer = lastUpstreamAnswer;
        this.peers = peers;
        this.fatal = fatal;
        this.sessionTimeoutMs = sessionTimeoutMs;
        // A heartbeat interval short of the session timeout: the group may drop the node a session
        // timeout after the last heartbeat it got, which left a little before its answer came.
        this.lease = new ServingLease(sessionTimeoutMs - heartbeatIntervalMs(sessionTimeoutMs), System.nanoTime());
        this.thread = new Thread(this::run, "pier-gateway-group");
        thread.setDaemon(true);
    }

    /** {@value #SESSION_TIMEOUT_MS}, or its default. */
    public static int sessionTimeoutMs(Map<String, String> config) {
        return Integer.parseInt(config.getOrDefault(SESSION_TIMEOUT_MS, String.valueOf(DEFAULT_SESSION_TIMEOUT_MS)).trim());
    }

    /**
     * Joins the gateway group of the upstream as {@code self}; {@code cluster} learns each
     * rebalance's map. The first assignment comes a moment later (the group's join). If the
     * membership fails for good (the upstream refuses the session timeout, or the group), the node
     * would serve no share state while looking healthy: {@code fatal} stops it instead.
     */
    public static GatewayMembership join(Map<String, String> config, Map<String, Object> upstreamSettings,
            StatePartitionAssignor.NodeAddress self, GatewayState state, BrokerServices services,
            GatewayCluster cluster, Upstream upstream, BiConsumer<String, Throwable> fatal) {
        int sessionMs = sessionTimeoutMs(config);
        String groupId = config.getOrDefault(GROUP_ID, DEFAULT_GROUP_ID);
        Map<String, Object> props = new HashMap<>(upstreamSettings);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "pier-gateway-" + self.nodeId());
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, sessionMs);
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, heartbeatIntervalMs(sessionMs));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, StatePartitionAssignor.class.getName());
        props.put(StatePartitionAssignor.TOPIC_CONFIG, state.topic());
        props.put(StatePartitionAssignor.SELF_CONFIG, self);
        props.put(StatePartitionAssignor.LISTENER_CONFIG,
                (java.util.function.Consumer<StatePartitionAssignor.Ownership>) cluster::update);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        long probeMs = Long.parseLong(config.getOrDefault(PROBE_INTERVAL_MS,
                String.valueOf(PeerWatch.DEFAULT_PROBE_INTERVAL_MS)));
        if (probeMs < 0) {
            throw new IllegalArgumentException(PROBE_INTERVAL_MS + " must be 0 (off) or more: " + probeMs);
        }
        PeerWatch peers = new PeerWatch(self.nodeId(), cluster::ownership, PeerWatch.TCP, probeMs,
                member -> removeMember(upstream, groupId, member));
        GatewayMembership m = new GatewayMembership(consumer, state, services, cluster, upstream::lastAnswerNanos,
                peers, fatal, sessionMs);
        state.onLost(p -> {
            m.lost.add(p);
            consumer.wakeup();
        });
        consumer.subscribe(List.of(state.topic()), m.new Listener());
        m.thread.start();
        peers.start();
        return m;
    }

    /**
     * Has the gateway group drop {@code memberId} (a node that died): a LeaveGroup naming it, to
     * the group's coordinator, as Admin's removal of a member sends. The answer is only logged: if
     * it is lost the session timeout drops the member all the same.
     */
    private static void removeMember(Upstream upstream, String groupId, String memberId) {
        var unused = upstream.coordinator(FindCoordinatorRequest.CoordinatorType.GROUP.id(), groupId)
                .thenCompose(node -> upstream.send(node, new LeaveGroupRequest.Builder(groupId,
                        List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(memberId)
                                .setReason("pier gateway node gone: its port refuses connections")))))
                .whenComplete((answer, e) -> {
                    Errors error = e != null ? Errors.forException(Futures.unwrap(e))
                            : answer instanceof LeaveGroupResponse r ? r.error() : Errors.UNKNOWN_SERVER_ERROR;
                    if (error == Errors.NONE) {
                        LOG.info("The gateway group dropped member {}", memberId);
                    } else {
                        LOG.warn("Dropping member {} from the gateway group failed ({}); the session timeout drops it",
                                memberId, error);
                        if (error == Errors.NOT_COORDINATOR || error == Errors.COORDINATOR_NOT_AVAILABLE) {
                            upstream.forgetCoordinator(FindCoordinatorRequest.CoordinatorType.GROUP.id(), groupId);
                        }
                    }
                });
    }

    private static int heartbeatIntervalMs(int sessionMs) {
        return Math.max(100, sessionMs / 5);
    }

    private void run() {
        RuntimeException failure = null;
        try {
            while (running) {
                try {
                    consumer.poll(POLL); // heartbeats, rebalances; the assigned partitions are paused, never read
                } catch (WakeupException e) {
                    if (!running) {
                        break; // closing
                    }
                }
                giveUpIfLeaseExpired();
                rejoinIfLost();
            }
        } catch (RuntimeException e) {
            failure = e;
            release(new HashSet<>(List.copyOf(served())));
        } finally {
            try {
                consumer.close(Duration.ofSeconds(10)); // leaves the group: the others take over at once
            } catch (RuntimeException e) {
                LOG.warn("Leaving the gateway group failed", e);
            }
        }
        if (failure != null && running) {
            fatal.accept(failureMessage(failure), failure);
        }
    }

    private String failureMessage(RuntimeException failure) {
        if (failure instanceof InvalidSessionTimeoutException) {
            return SESSION_TIMEOUT_MS + "=" + sessionTimeoutMs + " is refused by the upstream cluster: it must lie"
                    + " between the upstream brokers' group.min.session.timeout.ms and group.max.session.timeout.ms";
        }
        return "the gateway group membership on the upstream failed, so this node can serve no share state";
    }

    /**
     * Without an answer from the upstream for the lease (see {@link ServingLease}) this node stops
     * serving its state partitions at once: their share requests are answered
     * NOT_LEADER_OR_FOLLOWER and NOT_COORDINATOR, FindCoordinator names no node for them, and
     * Metadata is answered at once without brokers (clients take that as a failed update and ask
     * another node) rather than forwarded into the dead link, so the clients find the node the
     * group gave them to. Then it gives them up and joins again, as when the upstream ends its
     * writes; the next split ends all this.
     */
    private void giveUpIfLeaseExpired() {
        long now = System.nanoTime();
        lease.groupAnswers(groupAnswers(), now);
        Set<Integer> served = served();
        if (served.isEmpty() || !lease.expired(lastUpstreamAnswer.getAsLong(), now)) {
            return;
        }
        LOG.warn("No answer from the upstream for {} ms: giving up share state partitions {} until this node is back"
                + " in the gateway group", lease.lengthMs(), served);
        served.forEach(state::stopServing);
        cluster.withdraw();
        lost.addAll(served);
        lease.restart(now);
    }

    /** Answers the group's coordinator has given this node's consumer: heartbeats, joins, syncs. */
    private double groupAnswers() {
        double total = 0;
        for (var e : consumer.metrics().entrySet()) {
            MetricName name = e.getKey();
            if (name.group().equals("consumer-coordinator-metrics") && ANSWER_COUNTS.contains(name.name())
                    && e.getValue().metricValue() instanceof Double d) {
                total += d;
            }
        }
        return total;
    }

    /**
     * The upstream ended this node's writes to some state partitions: the group gave them to
     * another node after dropping this one (a session that ran out unnoticed, a long pause), or a
     * transaction ran out. Either way this node's place in the group may be stale and what it
     * holds in memory of them is ahead of what is durable. It gives everything up and joins again
     * as a new member: the group hands it the state partitions no other node serves (these again,
     * if only a transaction ran out), which it replays from the upstream; it fences no one.
     */
    private void rejoinIfLost() {
        Set<Integer> ps = new HashSet<>();
        for (Integer p; (p = lost.poll()) != null; ) {
            ps.add(p);
        }
        if (ps.isEmpty()) {
            return;
        }
        LOG.warn("The upstream ended this node's writes to share state partitions {}: rejoining the gateway group", ps);
        consumer.unsubscribe(); // gives everything up (onPartitionsRevoked or onPartitionsLost)
        release(ps); // and these, should the group have taken them away already
        consumer.subscribe(List.of(state.topic()), new Listener());
    }

    private Set<Integer> served() {
        Set<Integer> out = new HashSet<>();
        for (int p = 0; p < state.partitions(); p++) {
            if (state.owns(p)) {
                out.add(p);
            }
        }
        return out;
    }

    /** Called on the membership thread, inside poll. */
    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            consumer.pause(partitions);
            for (TopicPartition tp : partitions) {
                try {
                    DurableSharePersister taken = state.take(tp.partition());
                    // Its topics are copied here too, so Admin describes its share-partitions at once.
                    java.util.Set<org.apache.kafka.common.Uuid> topicIds = new HashSet<>();
                    taken.keys().forEach(k -> topicIds.add(k.topicId()));
                    topics.ensureIds(topicIds).thenCompose(v -> services.shareStateTaken(taken.keys(), taken.groups()))
                            .get(30, TimeUnit.SECONDS);
                    state.serve(tp.partition());
                } catch (IOException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // Another node may still be writing it (then it is fenced now) or the upstream
                    // failed: give the partition up and let the group hand it out again.
                    LOG.error("Taking over share state partition {} failed; leaving it to the group", tp.partition(), e);
                    state.release(tp.partition());
                    consumer.enforceRebalance("share state partition " + tp.partition() + " could not be opened");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            Set<Integer> ps = new HashSet<>();
            partitions.forEach(tp -> ps.add(tp.partition()));
            release(ps);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            LOG.warn("This gateway node lost its place in the gateway group (session timed out?); "
                    + "its share state partitions {} are served elsewhere now", partitions);
            onPartitionsRevoked(partitions);
        }
    }

    /** Drops the engine's share-partitions of these state partitions, then stops serving them. */
    private void release(Set<Integer> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        int n = state.partitions();
        // First no longer served here, so no ShareFetch loads a share-partition of them again
        // between the drop below and the close.
        partitions.forEach(state::stopServing);
        try {
            services.shareStateReleased((topicId, partition) ->
                    partitions.contains(PartitionedShareState.partitionOf(topicId, partition, n)),
                    groupId -> partitions.contains(PartitionedShareState.partitionOf(groupId, n)))
                    .get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("Dropping the share-partitions of state partitions {} failed", partitions, e);
        }
        partitions.forEach(state::release);
    }

    @Override
    public void close() {
        peers.close();
        running = false;
        consumer.wakeup();
        try {
            thread.join(15_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
