package io.pier.common;

/**
 * The only source of time for engine code. Production uses {@link #SYSTEM}; tests use
 * {@link ManualClock} so lock expiry and session timeouts are driven by advancing time, never by
 * sleeping.
 */
public interface Clock {

    /** Wall-clock milliseconds, for record timestamps and retention. */
    long wallMs();

    /**
     * Monotonic milliseconds, for deadlines (acquisition locks, sessions, long polls). Never goes
     * backwards, unlike the wall clock.
     */
    long monoMs();

    Clock SYSTEM = new Clock() {
        @Override
        public long wallMs() {
            return System.currentTimeMillis();
        }

        @Override
        public long monoMs() {
            return System.nanoTime() / 1_000_000L;
        }
    };
}
