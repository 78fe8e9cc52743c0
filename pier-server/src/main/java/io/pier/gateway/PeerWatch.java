package io.pier.gateway;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.pier.gateway.StatePartitionAssignor.NodeAddress;
import io.pier.gateway.StatePartitionAssignor.Ownership;

/**
 * Notices a gateway node whose process is gone and has the upstream group drop it at once,
 * rather than after {@code pier.gateway.session.timeout.ms}: the other nodes then take its state
 * partitions over a rebalance later, not a session timeout later.
 *
 * <p>A process that died (SIGKILL, a crash) leaves nothing listening on its port, so connecting
 * there is refused at once; a node that is only paused, slow or cut off from the upstream still
 * has its port open (the kernel accepts the connection), and is left to the session timeout and
 * its own lease ({@link ServingLease}), since it may come back. Every
 * {@code pier.gateway.liveness.probe.interval.ms} ({@value #DEFAULT_PROBE_INTERVAL_MS} ms; 0 turns
 * the watch off) each other node of the last split is connected to and the connection closed; after {@value #REFUSALS} refusals in a row the node's member id in the group
 * (carried by the split, see {@link Ownership#memberIds}) is handed to {@code remove}, once per
 * member id, which sends the group's coordinator a LeaveGroup naming it, as a member that leaves
 * does. A node restarted in its place joins under a new member id.
 *
 * <p>Runs on its own thread, {@code pier-peer-watch}, with blocking connects; {@link #probeOnce}
 * is one round, for tests with a {@link Probe} of their own.
 */
final class PeerWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerWatch.class);
    static final long DEFAULT_PROBE_INTERVAL_MS = 500;
    static final int REFUSALS = 2;
    private static final int CONNECT_TIMEOUT_MS = 1_000;

    /** Whether connecting to a node was refused (nothing listening), as opposed to accepted or slow. */
    interface Probe {
        boolean refused(NodeAddress node);
    }

    /** The real probe: a TCP connect, closed at once. Only a refusal counts; a timeout does not. */
    static final Probe TCP = node -> {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(node.host(), node.port()), CONNECT_TIMEOUT_MS);
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // a timeout or an unresolvable name says nothing about the process
        }
    };

    private final int self;
    private final Supplier<Ownership> split;
    private final Probe probe;
    private final Consumer<String> remove;
    private final long intervalMs;
    /** Refusals in a row, by node id. */
    private final Map<Integer, Integer> refusals = new HashMap<>();
    /** Member ids already handed to {@code remove}. */
    private final Set<String> removed = new HashSet<>();
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param self this node's id, never probed
     * @param split the last split of the state partitions: the nodes to probe and their member ids
     * @param intervalMs time between rounds; 0: {@link #start} starts nothing
     * @param remove has the group drop the member with this id
     */
    PeerWatch(int self, Supplier<Ownership> split, Probe probe, long intervalMs, Consumer<String> remove) {
        this.self = self;
        this.split = split;
        this.probe = probe;
        this.intervalMs = intervalMs;
        this.remove = remove;
        this.thread = new Thread(this::run, "pier-peer-watch");
        thread.setDaemon(true);
    }

    void start() {
        if (intervalMs > 0) {
            thread.start();
        }
    }

    private void run() {
        while (running) {
            try {
                probeOnce();
                Thread.sleep(intervalMs);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("Probing the other gateway nodes failed", e);
            }
        }
    }

    /** One round: probes each other node of the split; returns the member ids handed to remove. */
    Set<String> probeOnce() {
        Ownership o = split.get();
        Set<String> handed = new HashSet<>();
        Set<Integer> present = new HashSet<>();
        for (NodeAddress node : o.nodes()) {
            if (node.nodeId() == self) {
                continue;
            }
            present.add(node.nodeId());
            if (!probe.refused(node)) {
                refusals.remove(node.nodeId());
                continue;
            }
            int inARow = refusals.merge(node.nodeId(), 1, Integer::sum);
            String member = o.memberIds().get(node.nodeId());
            if (inARow >= REFUSALS && member != null && removed.add(member)) {
                LOG.warn("Gateway node {} at {}:{} refuses connections ({} probes in a row): asking the gateway group"
                        + " to drop its member {} now rather than after the session timeout", node.nodeId(),
                        node.host(), node.port(), inARow, member);
                remove.accept(member);
                handed.add(member);
            }
        }
        refusals.keySet().retainAll(present);
        // A member the group has dropped is gone from the split: it cannot be handed out again.
        removed.retainAll(o.memberIds().values());
        return handed;
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
