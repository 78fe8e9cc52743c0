package io.pier.common;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Where any thread leaves work for one agent, until the agent closes it: after {@link #close()} an
 * {@link #offer} is refused, so the offerer can fail its own work. An offer racing with the close
 * is never left behind: either the agent's last drain (after {@code close()}) takes it, or the
 * offerer sees the close and takes it back.
 */
public final class ClosableInbox<T> {
    private final Queue<T> items = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** Any thread: true if {@code item} will be polled; false once closed (the caller keeps it). */
    public boolean offer(T item) {
        if (closed) {
            return false;
        }
        items.add(item);
        // close() sets the flag before its last drain: an item added after that drain is taken back here.
        return !(closed && items.remove(item));
    }

    /** The agent's thread: the oldest item, or null. */
    public T poll() {
        return items.poll();
    }

    public boolean isEmpty() {
        return items.isEmpty();
    }

    /** The agent's thread: refuses every later offer; drain after it to take the ones that raced. */
    public void close() {
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }
}
