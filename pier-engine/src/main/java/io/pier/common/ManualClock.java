package io.pier.common;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to; wall and monotonic time advance together. One thread (the
 * test) moves it; any number may read it, as a broker's agents do.
 */
public final class ManualClock implements Clock {
    private final AtomicLong wallMs;
    private final AtomicLong monoMs = new AtomicLong();

    public ManualClock(long startWallMs) {
        this.wallMs = new AtomicLong(startWallMs);
    }

    @Override
    public long wallMs() {
        return wallMs.get();
    }

    @Override
    public long monoMs() {
        return monoMs.get();
    }

    public void advance(long deltaMs) {
        if (deltaMs < 0) {
            throw new IllegalArgumentException("time only moves forward: " + deltaMs);
        }
        wallMs.addAndGet(deltaMs);
        monoMs.addAndGet(deltaMs);
    }
}
