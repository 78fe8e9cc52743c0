package io.pier.service;

import io.pier.protocol.ApiRouter;
import java.util.concurrent.locks.ReentrantLock;

/** Test-only fixture for LayeringTest: shard-owned code breaking each of its rules. */
public final class ShardOwnedViolations {
    private final ReentrantLock lock = new ReentrantLock();
    private long count;

    public synchronized void increment() {
        lock.lock();
        try {
            count++;
        } finally {
            lock.unlock();
        }
    }

    public long elapsedNanos() {
        return System.nanoTime() + count;
    }

    public void pause() throws InterruptedException {
        Thread.sleep(1);
    }

    public ApiRouter router() {
        return new ApiRouter();
    }
}
