package io.pier.network;

import java.net.InetAddress;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Kafka's connection limits ({@code ConnectionQuotas}): {@code max.connections} on the whole
 * broker, {@code listener.name.<listener>.max.connections} per listener, and
 * {@code max.connections.per.ip} with its {@code max.connections.per.ip.overrides} per client
 * address. A connection holds one slot of each from {@link #tryAcquire} until its one
 * {@link #release}; a refused one holds none.
 *
 * <p>Called from every event loop, so no event loop ever waits for another: the broker-wide and
 * listener limits are atomic counters, raised first and checked after, and lowered again when the
 * connection is refused. A counter is never below the connections that hold it, so none is ever
 * over its limit. Two connections racing for the last slots may both be refused (each sees the
 * other's raise); that costs a retry near the limit, never a connection past it. The per-address
 * counts are checked and raised in one {@link ConcurrentHashMap#compute} per address, and their
 * entries go once back to 0, so addresses that have come and gone cost nothing.
 *
 * <p>As in Kafka, the inter-broker listener, when there are several, counts towards
 * {@code max.connections} but is never refused by it (it keeps a broker reachable by the others
 * when clients have taken every slot).
 */
public final class ConnectionLimits {
    /** What {@link #tryAcquire} decided; every value but {@link #ADMITTED} names the limit reached. */
    public enum Admission {
        ADMITTED,
        OVER_PER_IP,
        OVER_LISTENER,
        OVER_BROKER;

        /** The setting whose limit refused a connection on {@code listener}, for the log. */
        public String setting(String listener) {
            return switch (this) {
                case ADMITTED -> "none";
                case OVER_PER_IP -> "max.connections.per.ip";
                case OVER_LISTENER -> "listener.name." + listener.toLowerCase(Locale.ROOT) + ".max.connections";
                case OVER_BROKER -> "max.connections";
            };
        }
    }

    private final int maxConnections;
    private final int defaultMaxPerIp;
    private final Map<InetAddress, Integer> maxPerIpOverrides;
    private final Map<String, Integer> maxPerListener;
    /** Counts towards max.connections without being refused by it; null: none. */
    private final String exemptListener;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> perListener = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InetAddress, Integer> perIp = new ConcurrentHashMap<>();

    /** No limit at all: every connection is admitted (and counted). One per server: counts are not shared. */
    public static ConnectionLimits unlimited() {
        return new ConnectionLimits(Integer.MAX_VALUE, Integer.MAX_VALUE, Map.of(), Map.of(), null);
    }

    /**
     * Limits are at least 0 (0 refuses every connection); {@code maxPerListener} is keyed by the
     * listener's name as the endpoints give it; a listener left out has no limit of its own.
     */
    public ConnectionLimits(int maxConnections, int defaultMaxPerIp, Map<InetAddress, Integer> maxPerIpOverrides,
            Map<String, Integer> maxPerListener, String exemptListener) {
        this.maxConnections = maxConnections;
        this.defaultMaxPerIp = defaultMaxPerIp;
        this.maxPerIpOverrides = Map.copyOf(maxPerIpOverrides);
        this.maxPerListener = Map.copyOf(maxPerListener);
        this.exemptListener = exemptListener;
    }

    /**
     * Takes a slot for a new connection from {@code address} on {@code listener}, or none if a
     * limit is reached (then the caller closes the connection and does not {@link #release}).
     */
    public Admission tryAcquire(String listener, InetAddress address) {
        AtomicInteger listenerCount = perListener.computeIfAbsent(listener, l -> new AtomicInteger());
        if (listenerCount.incrementAndGet() > maxPerListener.getOrDefault(listener, Integer.MAX_VALUE)) {
            listenerCount.decrementAndGet();
            return Admission.OVER_LISTENER;
        }
        if (total.incrementAndGet() > maxConnections && !listener.equals(exemptListener)) {
            total.decrementAndGet();
            listenerCount.decrementAndGet();
            return Admission.OVER_BROKER;
        }
        int maxFromAddress = maxPerIpOverrides.getOrDefault(address, defaultMaxPerIp);
        boolean[] admitted = {false};
        // compute is atomic per key: the check, the raise and the entry's creation happen together.
        perIp.compute(address, (a, count) -> {
            int n = count == null ? 0 : count;
            if (n >= maxFromAddress) {
                return count;
            }
            admitted[0] = true;
            return n + 1;
        });
        if (!admitted[0]) {
            total.decrementAndGet();
            listenerCount.decrementAndGet();
            return Admission.OVER_PER_IP;
        }
        return Admission.ADMITTED;
    }

    /** Gives back the slot of a connection {@link #tryAcquire} admitted; once per connection. */
    public void release(String listener, InetAddress address) {
        perIp.computeIfPresent(address, (a, count) -> count <= 1 ? null : count - 1);
        total.decrementAndGet();
        AtomicInteger listenerCount = perListener.get(listener);
        if (listenerCount != null) {
            listenerCount.decrementAndGet();
        }
    }

    /** Connections holding a slot, on the whole broker. */
    public int connections() {
        return total.get();
    }

    /** Connections holding a slot on {@code listener}. */
    public int connections(String listener) {
        AtomicInteger count = perListener.get(listener);
        return count == null ? 0 : count.get();
    }

    /** Addresses with a connection: the map shrinks back as they go. */
    int trackedAddresses() {
        return perIp.size();
    }

    /** Connections holding a slot from {@code address}. */
    public int connections(InetAddress address) {
        return perIp.getOrDefault(address, 0);
    }
}
