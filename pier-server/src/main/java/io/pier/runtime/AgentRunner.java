package io.pier.runtime;

import io.pier.common.Agent;
import io.pier.common.Clock;
import io.pier.common.Wakeup;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread of one {@link Agent}: reads the clock once per cycle, calls {@code doWork}, and
 * when a cycle did nothing parks until a producer calls {@link #wakeup()} or the agent's next
 * deadline comes. There is no polling interval: an idle broker sleeps.
 *
 * <p>A wake-up that arrives while the agent works is not lost: {@code unpark} before {@code park}
 * makes that park return at once (the thread's permit), so the agent runs another cycle and sees it.
 *
 * <p>After a cycle that did work the thread may keep running empty cycles for a short while
 * ({@code spinNanos}, {@code pier.agent.spin.us}) before it parks, as Aeron's back-off idle
 * strategies do: work tends to come in bursts along a request's path (event loop, shard,
 * {@code pier-offsets}, event loop), and on a virtual machine a thread woken on a halted CPU waits
 * far longer than one woken while its CPU still runs. An agent that did nothing for a whole cycle
 * after a park parks again at once, so an idle broker still sleeps.
 */
public final class AgentRunner implements AgentSlot {
    private static final Logger LOG = LoggerFactory.getLogger(AgentRunner.class);
    /** Longest park even without a deadline, so a manual clock in tests still advances deadlines. */
    private static final long MAX_PARK_MS = 100;

    private final Clock clock;
    private final long spinNanos;
    private final ErrorHandler errors;
    private final Wakeup wakeup = this::unpark;
    private volatile Agent agent;
    private volatile Thread thread;
    private volatile boolean running;

    /** Told when a duty cycle throws: the agent's state may be broken, so the broker must stop. */
    @FunctionalInterface
    public interface ErrorHandler {
        void onAgentError(String agent, Throwable cause);
    }

    public AgentRunner(Clock clock, ErrorHandler errors) {
        this(clock, 0, errors);
    }

    /** @param spinNanos how long to look for more work after a cycle that did some, before parking */
    public AgentRunner(Clock clock, long spinNanos, ErrorHandler errors) {
        if (spinNanos < 0) {
            throw new IllegalArgumentException("spinNanos " + spinNanos);
        }
        this.clock = clock;
        this.spinNanos = spinNanos;
        this.errors = errors;
    }

    /** The wake-up to hand to the agent's queues; valid before {@link #start} too. */
    @Override
    public Wakeup wakeup() {
        return wakeup;
    }

    /** Starts the agent's thread. */
    @Override
    public void start(Agent agent) {
        if (this.agent != null) {
            throw new IllegalStateException("already started");
        }
        this.agent = agent;
        this.running = true;
        Thread t = new AgentThread(this::run, agent.roleName());
        t.setDaemon(true);
        this.thread = t;
        t.start();
    }

    /** The thread of every agent, so code can tell an agent's thread (which must never block) from others. */
    private static final class AgentThread extends Thread {
        AgentThread(Runnable body, String name) {
            super(body, name);
        }
    }

    /**
     * True on any agent's thread. Work handed from one agent to another goes on queues that never
     * make the sender wait, or two agents with full queues could wait on each other for ever.
     */
    public static boolean onAnyAgentThread() {
        return Thread.currentThread() instanceof AgentThread;
    }

    private void unpark() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    private void run() {
        Agent a = agent;
        try {
            boolean worked = false;
            while (running) {
                long nowMs = clock.monoMs();
                int work = a.doWork(nowMs);
                if (work == 0 && worked && spinNanos > 0) {
                    work = spin(a);
                    nowMs = clock.monoMs();
                }
                worked = work > 0;
                if (work == 0 && running) {
                    long parkMs = Math.min(MAX_PARK_MS, Math.max(0, a.nextDeadlineMs() - nowMs));
                    if (parkMs > 0) {
                        LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(parkMs));
                    }
                }
            }
        } catch (Throwable t) {
            LOG.error("{} failed in its duty cycle", a.roleName(), t);
            errors.onAgentError(a.roleName(), t);
        } finally {
            try {
                a.onClose();
            } catch (RuntimeException e) {
                LOG.warn("{} failed while closing", a.roleName(), e);
            }
        }
    }

    /** Runs empty cycles for up to {@link #spinNanos}; the work of the first that found some, else 0. */
    private int spin(Agent a) {
        long until = System.nanoTime() + spinNanos;
        int work = 0;
        while (work == 0 && running && System.nanoTime() - until < 0) {
            Thread.onSpinWait();
            work = a.doWork(clock.monoMs());
        }
        return work;
    }

    /** Stops after the current cycle and waits for the thread (never from the agent's own thread). */
    @Override
    public void close() {
        running = false;
        Thread t = thread;
        if (t == null) {
            return;
        }
        LockSupport.unpark(t);
        if (Thread.currentThread() != t) {
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("{} did not stop within 10 s", agent.roleName());
            }
        }
    }
}
