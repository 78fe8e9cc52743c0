package io.pier.share;

/**
 * How long a released record waits before it may be acquired again (Pier's {@code
 * pier.share.release.backoff.*} group configs; off by default, Kafka's behaviour): {@code
 * initialMs} after its first delivery, times {@code multiplier} per further delivery, at most
 * {@code maxMs}. Other records keep flowing meanwhile.
 *
 * @param onLockExpiry whether a record whose acquisition lock expired waits too
 */
public record ReleaseBackoff(long initialMs, double multiplier, long maxMs, boolean onLockExpiry) {
    /** No backoff: a released record is available at once. */
    public static final ReleaseBackoff NONE = new ReleaseBackoff(0, 1.0, 0, false);

    public ReleaseBackoff {
        if (initialMs < 0 || maxMs < 0) {
            throw new IllegalArgumentException("backoff times must be >= 0: " + initialMs + ", " + maxMs);
        }
        if (!(multiplier >= 1.0)) {
            throw new IllegalArgumentException("backoff multiplier must be >= 1: " + multiplier);
        }
    }

    public boolean isOn() {
        return initialMs > 0 && maxMs > 0;
    }

    /** The wait after delivery number {@code deliveryCount} (from 1) was released; 0 when off. */
    public long delayMs(int deliveryCount) {
        if (!isOn()) {
            return 0;
        }
        double delay = initialMs * Math.pow(multiplier, Math.max(0, deliveryCount - 1));
        return delay >= maxMs ? maxMs : (long) delay;
    }
}
