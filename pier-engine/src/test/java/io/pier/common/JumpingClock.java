package io.pier.common;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link ManualClock} whose wall time can also step on its own, forwards or backwards, as an
 * NTP step or an operator's {@code date} moves a host's clock; monotonic time moves only with
 * {@link #advance}, and never backwards. One thread (the test) moves it; any number may read it.
 */
public final class JumpingClock implements Clock {
    private final ManualClock base;
    private final AtomicLong wallStepMs = new AtomicLong();

    public JumpingClock(long startWallMs) {
        this.base = new ManualClock(startWallMs);
    }

    @Override
    public long wallMs() {
        return base.wallMs() + wallStepMs.get();
    }

    @Override
    public long monoMs() {
        return base.monoMs();
    }

    /** Time passes: wall and monotonic time both move {@code deltaMs} forward. */
    public void advance(long deltaMs) {
        base.advance(deltaMs);
    }

    /** The wall clock alone is set {@code deltaMs} ahead (or behind, if negative); no time passes. */
    public void stepWall(long deltaMs) {
        wallStepMs.addAndGet(deltaMs);
    }
}
