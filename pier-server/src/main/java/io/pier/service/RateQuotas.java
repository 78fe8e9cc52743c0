package io.pier.service;

import io.pier.common.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * One rate quota as Kafka's ClientQuotaManager applies it: a byte rate ({@code producer_byte_rate},
 * {@code consumer_byte_rate}), or {@code request_percentage}, the time spent serving the client's
 * requests as a percentage of one thread, recorded in nanoseconds. Either way: the quota of a (user, client-id) is the most specific one set,
 * in Kafka's order, and every client that resolves to the same quota entity shares one rate.
 * The rate is sampled over {@code quota.window.num} windows of {@code quota.window.size.seconds}
 * and, as Kafka's, measured over at least all but one window, so a new client's first burst is
 * spread over the whole span instead of throttled at once. Over the quota, the throttle time is
 * how long the client must stay quiet for the rate to come back to it, at most the span.
 *
 * <p>Any thread (the event loops record). The windows are atomics: two recorders crossing into a
 * new window at the same moment may both reset it and lose a few bytes of that instant, which a
 * rate over seconds does not notice; a lock would be the only other choice.
 */
public final class RateQuotas {
    /** request_percentage 100 is one thread busy all the time: 10 ms of request time per second per percent. */
    private static final double NANOS_PER_SECOND_PER_PERCENT = 1e9 / 100;
    private final String key;
    private final Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas;
    private final Clock clock;
    private final long windowMs;
    private final int windows;
    /** Recorded units per second that one unit of the quota's value allows: 1 for bytes. */
    private final double unitsPerSecondPerQuotaUnit;
    private final Map<ClientQuotaEntity, Rate> rates = new ConcurrentHashMap<>();
    /** The quotas of the last image seen with this key set, or null if none: most clients have none. */
    private volatile Resolved resolved;

    private record Resolved(Map<ClientQuotaEntity, Map<String, Double>> image, Map<ClientQuotaEntity, Double> bounds) {}

    /**
     * @param key the quota key this enforces
     * @param quotas the current quotas (cluster metadata), read on every record; must return the same
     *        map until the quotas change, as the resolved bounds are cached per map
     */
    public RateQuotas(String key, Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas, Clock clock,
            long windowMs, int windows) {
        this(key, quotas, clock, windowMs, windows, 1);
    }

    /** {@code request_percentage}: nanoseconds recorded, 1% of a thread is 10 ms per second. */
    public static RateQuotas requestPercentage(Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas,
            Clock clock, long windowMs, int windows) {
        return new RateQuotas("request_percentage", quotas, clock, windowMs, windows, NANOS_PER_SECOND_PER_PERCENT);
    }

    private RateQuotas(String key, Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas, Clock clock,
            long windowMs, int windows, double unitsPerSecondPerQuotaUnit) {
        if (windows < 1 || windowMs < 1) {
            throw new IllegalArgumentException("quota windows " + windows + " x " + windowMs + " ms");
        }
        this.key = key;
        this.quotas = quotas;
        this.clock = clock;
        this.windowMs = windowMs;
        this.windows = windows;
        this.unitsPerSecondPerQuotaUnit = unitsPerSecondPerQuotaUnit;
    }

    /**
     * Counts {@code bytes} (or nanoseconds) against the client's quota; returns how long it is to be throttled,
     * 0 when it is within its quota or has none.
     */
    public int record(KafkaPrincipal principal, String clientId, long bytes) {
        return record(principal, clientId, bytes, true);
    }

    /**
     * As {@link #record}, but bytes that would put the client over its quota are not counted:
     * a throttled fetch is answered without its records (Kafka's rule), so they were not consumed.
     */
    public int recordUnlessOver(KafkaPrincipal principal, String clientId, long bytes) {
        return record(principal, clientId, bytes, false);
    }

    private int record(KafkaPrincipal principal, String clientId, long bytes, boolean keepIfOver) {
        Map<ClientQuotaEntity, Double> bounds = bounds();
        if (bounds.isEmpty()) {
            return 0;
        }
        ClientQuotaEntity entity = match(bounds, principal.getName(), clientId == null ? "" : clientId);
        if (entity == null) {
            return 0;
        }
        double bound = bounds.get(entity) * unitsPerSecondPerQuotaUnit;
        long nowMs = clock.monoMs();
        Rate rate = rates.computeIfAbsent(entity, e -> new Rate(windows));
        double bytesPerSecond = rate.record(bytes, nowMs, windowMs);
        if (bytesPerSecond <= bound) {
            return 0;
        }
        if (!keepIfOver) {
            rate.record(-bytes, nowMs, windowMs);
        }
        return (int) Math.min((bytesPerSecond - bound) / bound * rate.spanMs(nowMs, windowMs), (double) windowMs * windows);
    }

    private Map<ClientQuotaEntity, Double> bounds() {
        Map<ClientQuotaEntity, Map<String, Double>> image = quotas.get();
        Resolved r = resolved;
        if (r == null || r.image() != image) {
            Map<ClientQuotaEntity, Double> bounds = new HashMap<>();
            image.forEach((entity, values) -> {
                Double v = values.get(key);
                if (v != null) {
                    bounds.put(entity, v);
                }
            });
            r = new Resolved(image, Map.copyOf(bounds));
            resolved = r;
            rates.keySet().retainAll(bounds.keySet());
        }
        return r.bounds();
    }

    /**
     * Kafka's precedence: user and client, user and the default client, user, the default user and
     * client, both defaults, the default user, client, the default client. A null name is a default.
     */
    private static ClientQuotaEntity match(Map<ClientQuotaEntity, Double> bounds, String user, String clientId) {
        ClientQuotaEntity[] order = {
            entity(user, clientId), entity(user, null), single(ClientQuotaEntity.USER, user),
            entity(null, clientId), entity(null, null), single(ClientQuotaEntity.USER, null),
            single(ClientQuotaEntity.CLIENT_ID, clientId), single(ClientQuotaEntity.CLIENT_ID, null),
        };
        for (ClientQuotaEntity e : order) {
            if (bounds.containsKey(e)) {
                return e;
            }
        }
        return null;
    }

    /** The (user, client-id) entity. */
    private static ClientQuotaEntity entity(String user, String clientId) {
        Map<String, String> m = new HashMap<>();
        m.put(ClientQuotaEntity.USER, user);
        m.put(ClientQuotaEntity.CLIENT_ID, clientId);
        return new ClientQuotaEntity(m);
    }

    /** An entity of one type. */
    private static ClientQuotaEntity single(String type, String name) {
        Map<String, String> m = new HashMap<>();
        m.put(type, name);
        return new ClientQuotaEntity(m);
    }

    /** Bytes per window in a ring: slot i holds window number {@code starts[i]}. */
    static final class Rate {
        private final AtomicLongArray starts;
        private final AtomicLongArray bytes;

        Rate(int windows) {
            starts = new AtomicLongArray(windows);
            bytes = new AtomicLongArray(windows);
            for (int i = 0; i < windows; i++) {
                starts.set(i, Long.MIN_VALUE);
            }
        }

        /** Adds {@code n} bytes now; returns the rate in bytes per second over the live windows. */
        double record(long n, long nowMs, long windowMs) {
            long window = Math.floorDiv(nowMs, windowMs);
            int slot = (int) Math.floorMod(window, (long) starts.length());
            long start = starts.get(slot);
            if (start != window && starts.compareAndSet(slot, start, window)) {
                bytes.set(slot, 0);
            }
            bytes.addAndGet(slot, n);
            long total = 0;
            for (int i = 0; i < starts.length(); i++) {
                if (live(starts.get(i), window)) {
                    total += bytes.get(i);
                }
            }
            return total * 1000.0 / spanMs(nowMs, windowMs);
        }

        private boolean live(long start, long window) {
            return start != Long.MIN_VALUE && start > window - starts.length() && start <= window;
        }

        /**
         * From the start of the oldest live window to now, but at least all windows but one (Kafka's
         * Rate): a rate measured over a few milliseconds would throttle any first burst.
         */
        double spanMs(long nowMs, long windowMs) {
            long window = Math.floorDiv(nowMs, windowMs);
            long oldest = window;
            for (int i = 0; i < starts.length(); i++) {
                long s = starts.get(i);
                if (live(s, window)) {
                    oldest = Math.min(oldest, s);
                }
            }
            double span = nowMs - oldest * windowMs;
            return Math.max(span, (double) (starts.length() - 1) * windowMs + 1);
        }
    }
}
