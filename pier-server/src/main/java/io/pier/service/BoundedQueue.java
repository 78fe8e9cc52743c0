package io.pier.service;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A lock-free queue of commands with a capacity, for many producers and the one shard that
 * drains it: {@link #offer} refuses when it is full instead of growing without bound. The count
 * may run a little behind the queue (it is decremented as the shard takes commands), which only
 * makes the bound slightly conservative.
 */
final class BoundedQueue {
    private final int capacity;
    private final AtomicInteger size = new AtomicInteger();
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();

    BoundedQueue(int capacity) {
        this.capacity = capacity;
    }

    /** From any thread: false when the queue is full. */
    boolean offer(Runnable command) {
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return false;
        }
        queue.offer(command);
        return true;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** The shard's side: the next command, or null; frees its room. */
    Runnable poll() {
        Runnable r = queue.poll();
        if (r != null) {
            size.decrementAndGet();
        }
        return r;
    }
}
