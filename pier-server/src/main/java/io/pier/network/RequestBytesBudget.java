package io.pier.network;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code queued.max.request.bytes}: how many bytes of requests the broker holds, read but not yet
 * answered, across all its connections. A connection takes a frame's bytes before it copies the
 * frame out of the socket's buffer and gives them back once the request is answered (or its
 * connection is gone).
 *
 * <p>As Kafka's memory pool in its socket server, the budget is not strict: a frame is taken while
 * any room is left, so the bytes held may pass the budget by less than one frame (at most
 * {@code socket.request.max.bytes}, which the budget may not be below). With no room left, the
 * connection stops reading and waits in {@link #whenRoom}; each answer that brings room back wakes
 * the waiting connections, which try again. Zero or below: no budget (Kafka's default is -1).
 *
 * <p>Shared by the event loops of every connection, hence an atomic counter and a concurrent queue
 * of waiters; nothing here blocks.
 */
public final class RequestBytesBudget {
    private final long budget;
    private final AtomicLong available;
    private final AtomicLong waits = new AtomicLong();
    private final ConcurrentLinkedQueue<Runnable> waiting = new ConcurrentLinkedQueue<>();

    /** {@code budget} bytes; zero or below: unlimited. */
    public RequestBytesBudget(long budget) {
        this.budget = budget;
        this.available = new AtomicLong(Math.max(0, budget));
    }

    public static RequestBytesBudget unlimited() {
        return new RequestBytesBudget(-1);
    }

    public boolean limited() {
        return budget > 0;
    }

    /** Bytes left to take; below zero when the last frame taken went past the budget. */
    public long availableBytes() {
        return available.get();
    }

    /** Bytes of requests held now (read, not yet answered); 0 without a budget, which counts nothing. */
    public long heldBytes() {
        return limited() ? budget - available.get() : 0;
    }

    /** Times a connection stopped reading because the budget was spent. */
    public long waits() {
        return waits.get();
    }

    /** Takes {@code bytes} when any room is left (see the class comment); false when none is. */
    boolean tryTake(int bytes) {
        if (!limited()) {
            return true;
        }
        while (true) {
            long left = available.get();
            if (left <= 0) {
                return false;
            }
            if (available.compareAndSet(left, left - bytes)) {
                return true;
            }
        }
    }

    /** Gives back what {@link #tryTake} took, and wakes the connections waiting once there is room. */
    void giveBack(int bytes) {
        if (!limited() || bytes == 0) {
            return;
        }
        if (available.addAndGet(bytes) > 0) {
            wakeWaiting();
        }
    }

    /**
     * Runs {@code wake} once there is room, on the thread that gives it back, or at once when room
     * came back after the failed {@link #tryTake}; {@code wake} hands over to its own event loop.
     */
    void whenRoom(Runnable wake) {
        waits.incrementAndGet();
        waiting.add(wake);
        if (available.get() > 0) {
            wakeWaiting();
        }
    }

    private void wakeWaiting() {
        Runnable wake;
        while ((wake = waiting.poll()) != null) {
            wake.run();
        }
    }
}
