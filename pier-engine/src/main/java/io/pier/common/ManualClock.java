package io.pier.common;

/**
 * A clock that moves only when told to; wall and monotonic time advance together. One thread (the
 * test) moves it; any number may read it, as a broker's agents do.
 */
public final class ManualClock implements Clock {
    private volatile long wallMs;
    private volatile long monoMs;

    public ManualClock(long startWallMs) {
        this.wallMs = startWallMs;
        this.monoMs = 0;
    }

    @Override
    public long wallMs() {
        return wallMs;
    }

    @Override
    public long monoMs() {
        return monoMs;
    }

    public void advance(long deltaMs) {
        if (deltaMs < 0) {
            throw new IllegalArgumentException("time only moves forward: " + deltaMs);
        }
        wallMs += deltaMs;
        monoMs += deltaMs;
    }
}
