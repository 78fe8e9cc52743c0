package io.pier.runtime;

import io.pier.common.Wakeup;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The commands waiting for one agent, from many producers, drained by the agent alone. Two
 * lanes, one policy in one place:
 *
 * <ul>
 *   <li>from outside the agents (event loops, the metadata thread, tests): bounded; when it is
 *       full the producer waits for room, so an event loop stops reading its connections until
 *       the agent catches up (Kafka's {@code queued.max.requests} idea);
 *   <li>from another agent: unbounded, because an agent must never wait on another agent (two
 *       agents with full queues would wait on each other for ever). This lane is bounded in
 *       practice by the external work that caused it.
 * </ul>
 */
public final class CommandQueue {
    private static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final int capacity;
    private final Wakeup wakeup;
    private final AtomicInteger externalSize = new AtomicInteger();
    private final Queue<Runnable> external = new ConcurrentLinkedQueue<>();
    private final Queue<Runnable> internal = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    public CommandQueue(int capacity, Wakeup wakeup) {
        this.capacity = capacity;
        this.wakeup = wakeup;
    }

    /**
     * From any thread: queues {@code command} and wakes the agent. Throws if the queue is closed,
     * or if it stayed full for 30 s (the agent is stuck; waiting longer helps no one).
     */
    public void offer(Runnable command) {
        if (closed) {
            throw new IllegalStateException("queue closed");
        }
        if (AgentRunner.onAnyAgentThread()) {
            internal.offer(command);
        } else {
            offerExternal(command);
        }
        wakeup.wake();
    }

    private void offerExternal(Runnable command) {
        long giveUpAt = 0;
        while (externalSize.incrementAndGet() > capacity) {
            externalSize.decrementAndGet();
            if (giveUpAt == 0) {
                giveUpAt = System.nanoTime() + GIVE_UP_NANOS;
            } else if (closed || System.nanoTime() > giveUpAt) {
                throw new IllegalStateException("queue full for 30 s: its agent is not draining it");
            }
            wakeup.wake();
            LockSupport.parkNanos(50_000);
        }
        external.offer(command);
    }

    /** The agent's side: the next command (agent-to-agent ones first), or null. */
    public Runnable poll() {
        Runnable r = internal.poll();
        if (r != null) {
            return r;
        }
        r = external.poll();
        if (r != null) {
            externalSize.decrementAndGet();
        }
        return r;
    }

    public boolean isEmpty() {
        return internal.isEmpty() && external.isEmpty();
    }

    /** No command is taken after this. */
    public void close() {
        closed = true;
    }
}
