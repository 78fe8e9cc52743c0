package io.pier.group;

import io.pier.state.CommittedOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/**
 * Which committed offsets of a group have expired ({@code offsets.retention.minutes}), Kafka's
 * rules as a pure function; the shard's offset-expiry step asks it for every group it
 * coordinates, with what the group's coordinator says of the group.
 *
 * <pre>
 *   the group                           an offset expires once retention has passed since
 *   Empty, had members (became Empty    both the group became Empty and the offset was committed
 *     at emptySinceMs)                    (a commit to an Empty group starts its offset afresh)
 *   Empty, never had members (a simple  its commit (Kafka: a group without a protocol type);
 *     group: Long.MIN_VALUE), or no       also a consumer-protocol group, which Kafka ages
 *     coordinator holds it                from commits alone
 *   has members (Long.MAX_VALUE)        its commit, but only for a topic the group does not keep:
 *                                         Kafka lets the offsets of topics that no member
 *                                         subscribes to expire, all others never do
 * </pre>
 *
 * <p>Two clocks: commit timestamps are wall-clock milliseconds (they are stored, and outlive a
 * restart), {@code emptySinceMs} is the shard's monotonic time, so each is compared with the
 * present on its own clock.
 */
public final class OffsetExpiration {
    private OffsetExpiration() {}

    /**
     * The broker's settings, Kafka's names, defaults and lower bounds.
     *
     * @param retentionMs {@code offsets.retention.minutes} (default 10080, 7 days), in ms
     * @param checkIntervalMs {@code offsets.retention.check.interval.ms} (default 600000): how often
     *     each shard looks for expired offsets
     */
    public record Config(long retentionMs, long checkIntervalMs) {
        public static final String RETENTION_MINUTES = "offsets.retention.minutes";
        public static final String CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";
        public static final Config DEFAULTS = new Config(10_080L * 60_000, 600_000);

        public Config {
            if (retentionMs < 60_000 || checkIntervalMs < 1) {
                throw new IllegalArgumentException("bad offset retention settings");
            }
        }

        /** Kafka's types: the minutes an int of at least 1, the interval a long of at least 1. */
        public static Config fromProperties(Map<String, String> props) {
            long minutes = atLeastOne(props, RETENTION_MINUTES, DEFAULTS.retentionMs / 60_000, Integer.MAX_VALUE);
            long interval = atLeastOne(props, CHECK_INTERVAL_MS, DEFAULTS.checkIntervalMs, Long.MAX_VALUE);
            return new Config(minutes * 60_000, interval);
        }

        private static long atLeastOne(Map<String, String> props, String name, long fallback, long max) {
            String v = props.get(name);
            if (v == null) {
                return fallback;
            }
            long parsed;
            try {
                parsed = Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be an integer, not '" + v + "'", e);
            }
            if (parsed < 1 || parsed > max) {
                throw new IllegalArgumentException(name + " must be between 1 and " + max + ", not " + parsed);
            }
            return parsed;
        }
    }

    /**
     * The offsets of {@code offsets} that have expired at {@code nowWallMs} / {@code nowMonoMs}.
     *
     * @param emptySinceMs when the group became Empty (monotonic); {@link Long#MIN_VALUE} for a
     *     group whose offsets age from their commits alone; {@link Long#MAX_VALUE} while it has members
     * @param kept while the group has members: whether it keeps the offsets of a topic whatever
     *     their age (a topic its members subscribe to)
     */
    public static Map<TopicPartition, CommittedOffset> expired(Map<TopicPartition, CommittedOffset> offsets,
            long emptySinceMs, Predicate<String> kept, Config config, long nowWallMs, long nowMonoMs) {
        boolean hasMembers = emptySinceMs == Long.MAX_VALUE;
        // Subtractions on the present, never on the stored values, so the sentinels cannot overflow.
        boolean emptyLongEnough = hasMembers || emptySinceMs <= nowMonoMs - config.retentionMs();
        Map<TopicPartition, CommittedOffset> expired = new HashMap<>();
        if (!emptyLongEnough) {
            return expired;
        }
        Map<String, Boolean> keptTopics = new HashMap<>();
        offsets.forEach((tp, o) -> {
            if (o.commitTimestampMs() <= nowWallMs - config.retentionMs()
                    && !(hasMembers && keptTopics.computeIfAbsent(tp.topic(), kept::test))) {
                expired.put(tp, o);
            }
        });
        return expired;
    }
}
