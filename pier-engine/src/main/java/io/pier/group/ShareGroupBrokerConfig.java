package io.pier.group;

import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/**
 * Broker-level share-group settings ({@code group.share.*}), with Kafka 4.4's names and defaults.
 * They are the defaults and the bounds for the per-group {@code share.*} configs ({@link
 * GroupConfig}). Also the two broker settings of share-group dead-letter queues (KIP-1191), which
 * Kafka keeps in its group-coordinator settings: {@code errors.deadletterqueue.topic.name.prefix}
 * ({@link #deadLetterTopicPrefix()}) and {@code errors.deadletterqueue.auto.create.topics.enable}
 * ({@link #deadLetterAutoCreateTopics()}). Kafka can change both at run time; Pier reads them once
 * at start-up.
 *
 * <p>Immutable; safe to share between threads. Every instance satisfies, for each bounded setting,
 * {@code min <= value <= max}, and {@code heartbeatIntervalMs < sessionTimeoutMs} and {@code
 * maxShareSessions >= maxSize}; the constructor throws {@link ConfigException} naming the setting
 * otherwise.
 *
 * <p>Allowed ranges of each setting (Kafka's own where Kafka has one):
 *
 * <pre>
 *  group.share.session.timeout.ms / .min. / .max.            &gt;= 1
 *  group.share.heartbeat.interval.ms / .min. / .max.         &gt;= 1
 *  group.share.record.lock.duration.ms                       1000 .. 3600000
 *  group.share.min.record.lock.duration.ms                   1000 .. 30000
 *  group.share.max.record.lock.duration.ms                   30000 .. 3600000
 *  group.share.delivery.count.limit                          2 .. 10
 *  group.share.min.delivery.count.limit                      2 .. 5
 *  group.share.max.delivery.count.limit                      5 .. 25
 *  group.share.partition.max.record.locks                    100 .. 10000
 *  group.share.min.partition.max.record.locks                100 .. 2000
 *  group.share.max.partition.max.record.locks                2000 .. 10000
 *  group.share.max.size                                      1 .. 1000
 *  group.share.max.share.sessions                            &gt;= 1 and &gt;= group.share.max.size
 * </pre>
 *
 * These ranges already let tests go low (a 1 s lock, a 1 s session timeout, a 100 ms heartbeat) by
 * lowering the {@code .min.} settings, so Pier does not widen them.
 */
public record ShareGroupBrokerConfig(
        int sessionTimeoutMs,
        int minSessionTimeoutMs,
        int maxSessionTimeoutMs,
        int heartbeatIntervalMs,
        int minHeartbeatIntervalMs,
        int maxHeartbeatIntervalMs,
        int recordLockDurationMs,
        int minRecordLockDurationMs,
        int maxRecordLockDurationMs,
        int deliveryCountLimit,
        int minDeliveryCountLimit,
        int maxDeliveryCountLimit,
        int partitionMaxRecordLocks,
        int minPartitionMaxRecordLocks,
        int maxPartitionMaxRecordLocks,
        int maxSize,
        int maxShareSessions,
        String deadLetterTopicPrefix,
        boolean deadLetterAutoCreateTopics) {

    public static final String SESSION_TIMEOUT_MS = "group.share.session.timeout.ms";
    public static final String MIN_SESSION_TIMEOUT_MS = "group.share.min.session.timeout.ms";
    public static final String MAX_SESSION_TIMEOUT_MS = "group.share.max.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "group.share.heartbeat.interval.ms";
    public static final String MIN_HEARTBEAT_INTERVAL_MS = "group.share.min.heartbeat.interval.ms";
    public static final String MAX_HEARTBEAT_INTERVAL_MS = "group.share.max.heartbeat.interval.ms";
    public static final String RECORD_LOCK_DURATION_MS = "group.share.record.lock.duration.ms";
    public static final String MIN_RECORD_LOCK_DURATION_MS = "group.share.min.record.lock.duration.ms";
    public static final String MAX_RECORD_LOCK_DURATION_MS = "group.share.max.record.lock.duration.ms";
    public static final String DELIVERY_COUNT_LIMIT = "group.share.delivery.count.limit";
    public static final String MIN_DELIVERY_COUNT_LIMIT = "group.share.min.delivery.count.limit";
    public static final String MAX_DELIVERY_COUNT_LIMIT = "group.share.max.delivery.count.limit";
    public static final String PARTITION_MAX_RECORD_LOCKS = "group.share.partition.max.record.locks";
    public static final String MIN_PARTITION_MAX_RECORD_LOCKS = "group.share.min.partition.max.record.locks";
    public static final String MAX_PARTITION_MAX_RECORD_LOCKS = "group.share.max.partition.max.record.locks";
    public static final String MAX_SIZE = "group.share.max.size";
    public static final String MAX_SHARE_SESSIONS = "group.share.max.share.sessions";
    /**
     * The prefix every group's {@code errors.deadletterqueue.topic.name} must start with; empty for
     * no rule. Kafka's default: {@code dlq.}.
     */
    public static final String DEAD_LETTER_TOPIC_NAME_PREFIX = "errors.deadletterqueue.topic.name.prefix";
    /** Whether a group's dead-letter topic is created when it does not exist. Kafka's default: false. */
    public static final String DEAD_LETTER_AUTO_CREATE_TOPICS_ENABLE = "errors.deadletterqueue.auto.create.topics.enable";

    private static final ConfigDef DEFINITION = new ConfigDef()
            .define(SESSION_TIMEOUT_MS, Type.INT, 45_000, Range.atLeast(1), Importance.MEDIUM,
                    "Default share-group member session timeout")
            .define(MIN_SESSION_TIMEOUT_MS, Type.INT, 45_000, Range.atLeast(1), Importance.MEDIUM,
                    "Lowest share.session.timeout.ms a group may set")
            .define(MAX_SESSION_TIMEOUT_MS, Type.INT, 60_000, Range.atLeast(1), Importance.MEDIUM,
                    "Highest share.session.timeout.ms a group may set")
            .define(HEARTBEAT_INTERVAL_MS, Type.INT, 5_000, Range.atLeast(1), Importance.MEDIUM,
                    "Default share-group heartbeat interval")
            .define(MIN_HEARTBEAT_INTERVAL_MS, Type.INT, 5_000, Range.atLeast(1), Importance.MEDIUM,
                    "Lowest share.heartbeat.interval.ms a group may set")
            .define(MAX_HEARTBEAT_INTERVAL_MS, Type.INT, 15_000, Range.atLeast(1), Importance.MEDIUM,
                    "Highest share.heartbeat.interval.ms a group may set")
            .define(RECORD_LOCK_DURATION_MS, Type.INT, 30_000, Range.between(1_000, 3_600_000),
                    Importance.MEDIUM, "Default acquisition lock duration")
            .define(MIN_RECORD_LOCK_DURATION_MS, Type.INT, 15_000, Range.between(1_000, 30_000),
                    Importance.MEDIUM, "Lowest share.record.lock.duration.ms a group may set")
            .define(MAX_RECORD_LOCK_DURATION_MS, Type.INT, 60_000, Range.between(30_000, 3_600_000),
                    Importance.MEDIUM, "Highest share.record.lock.duration.ms a group may set")
            .define(DELIVERY_COUNT_LIMIT, Type.INT, 5, Range.between(2, 10), Importance.MEDIUM,
                    "Default delivery attempts before a record is archived")
            .define(MIN_DELIVERY_COUNT_LIMIT, Type.INT, 2, Range.between(2, 5), Importance.MEDIUM,
                    "Lowest share.delivery.count.limit a group may set")
            .define(MAX_DELIVERY_COUNT_LIMIT, Type.INT, 10, Range.between(5, 25), Importance.MEDIUM,
                    "Highest share.delivery.count.limit a group may set")
            .define(PARTITION_MAX_RECORD_LOCKS, Type.INT, 2_000, Range.between(100, 10_000),
                    Importance.MEDIUM, "Default in-flight window size of a share-partition")
            .define(MIN_PARTITION_MAX_RECORD_LOCKS, Type.INT, 100, Range.between(100, 2_000),
                    Importance.MEDIUM, "Lowest share.partition.max.record.locks a group may set")
            .define(MAX_PARTITION_MAX_RECORD_LOCKS, Type.INT, 4_000, Range.between(2_000, 10_000),
                    Importance.MEDIUM, "Highest share.partition.max.record.locks a group may set")
            .define(MAX_SIZE, Type.INT, 200, Range.between(1, 1_000), Importance.MEDIUM,
                    "Maximum number of members in one share group")
            .define(MAX_SHARE_SESSIONS, Type.INT, 2_000, Range.atLeast(1), Importance.MEDIUM,
                    "Maximum number of share sessions on the broker")
            .define(DEAD_LETTER_TOPIC_NAME_PREFIX, Type.STRING, "dlq.", Importance.MEDIUM,
                    "Required prefix of share-group dead-letter topic names; empty for none")
            .define(DEAD_LETTER_AUTO_CREATE_TOPICS_ENABLE, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Whether a missing share-group dead-letter topic is created");

    /** Kafka's defaults. */
    public static final ShareGroupBrokerConfig DEFAULTS = fromProperties(Map.of());

    public ShareGroupBrokerConfig {
        Objects.requireNonNull(deadLetterTopicPrefix, DEAD_LETTER_TOPIC_NAME_PREFIX);
        requireBounds(SESSION_TIMEOUT_MS, sessionTimeoutMs, MIN_SESSION_TIMEOUT_MS, minSessionTimeoutMs,
                MAX_SESSION_TIMEOUT_MS, maxSessionTimeoutMs);
        requireBounds(HEARTBEAT_INTERVAL_MS, heartbeatIntervalMs, MIN_HEARTBEAT_INTERVAL_MS,
                minHeartbeatIntervalMs, MAX_HEARTBEAT_INTERVAL_MS, maxHeartbeatIntervalMs);
        requireBounds(RECORD_LOCK_DURATION_MS, recordLockDurationMs, MIN_RECORD_LOCK_DURATION_MS,
                minRecordLockDurationMs, MAX_RECORD_LOCK_DURATION_MS, maxRecordLockDurationMs);
        requireBounds(DELIVERY_COUNT_LIMIT, deliveryCountLimit, MIN_DELIVERY_COUNT_LIMIT,
                minDeliveryCountLimit, MAX_DELIVERY_COUNT_LIMIT, maxDeliveryCountLimit);
        requireBounds(PARTITION_MAX_RECORD_LOCKS, partitionMaxRecordLocks, MIN_PARTITION_MAX_RECORD_LOCKS,
                minPartitionMaxRecordLocks, MAX_PARTITION_MAX_RECORD_LOCKS, maxPartitionMaxRecordLocks);
        if (heartbeatIntervalMs >= sessionTimeoutMs) {
            throw new ConfigException(HEARTBEAT_INTERVAL_MS + " must be less than " + SESSION_TIMEOUT_MS
                    + " (" + heartbeatIntervalMs + " >= " + sessionTimeoutMs + ")");
        }
        if (maxSize < 1) {
            throw new ConfigException(MAX_SIZE, maxSize, "must be at least 1");
        }
        if (maxShareSessions < maxSize) {
            throw new ConfigException(MAX_SHARE_SESSIONS + " must be greater than or equal to " + MAX_SIZE
                    + " (" + maxShareSessions + " < " + maxSize + ")");
        }
    }

    /**
     * Reads the {@code group.share.*} and {@code errors.deadletterqueue.*} settings from broker
     * properties. Keys this record does not know are ignored (the server holds them); a missing
     * key takes Kafka's default. As Kafka's string settings, the prefix is trimmed.
     *
     * @throws ConfigException naming the setting, for an unparsable or out-of-range value or for
     *     bounds that contradict each other
     */
    public static ShareGroupBrokerConfig fromProperties(Map<String, String> props) {
        Map<String, Object> v = DEFINITION.parse(props);
        return new ShareGroupBrokerConfig(
                (Integer) v.get(SESSION_TIMEOUT_MS),
                (Integer) v.get(MIN_SESSION_TIMEOUT_MS),
                (Integer) v.get(MAX_SESSION_TIMEOUT_MS),
                (Integer) v.get(HEARTBEAT_INTERVAL_MS),
                (Integer) v.get(MIN_HEARTBEAT_INTERVAL_MS),
                (Integer) v.get(MAX_HEARTBEAT_INTERVAL_MS),
                (Integer) v.get(RECORD_LOCK_DURATION_MS),
                (Integer) v.get(MIN_RECORD_LOCK_DURATION_MS),
                (Integer) v.get(MAX_RECORD_LOCK_DURATION_MS),
                (Integer) v.get(DELIVERY_COUNT_LIMIT),
                (Integer) v.get(MIN_DELIVERY_COUNT_LIMIT),
                (Integer) v.get(MAX_DELIVERY_COUNT_LIMIT),
                (Integer) v.get(PARTITION_MAX_RECORD_LOCKS),
                (Integer) v.get(MIN_PARTITION_MAX_RECORD_LOCKS),
                (Integer) v.get(MAX_PARTITION_MAX_RECORD_LOCKS),
                (Integer) v.get(MAX_SIZE),
                (Integer) v.get(MAX_SHARE_SESSIONS),
                (String) v.get(DEAD_LETTER_TOPIC_NAME_PREFIX),
                (Boolean) v.get(DEAD_LETTER_AUTO_CREATE_TOPICS_ENABLE));
    }

    private static void requireBounds(
            String name, int value, String minName, int min, String maxName, int max) {
        if (max < min) {
            throw new ConfigException(maxName + " must be greater than or equal to " + minName
                    + " (" + max + " < " + min + ")");
        }
        if (value < min) {
            throw new ConfigException(name + " must be greater than or equal to " + minName
                    + " (" + value + " < " + min + ")");
        }
        if (value > max) {
            throw new ConfigException(name + " must be less than or equal to " + maxName
                    + " (" + value + " > " + max + ")");
        }
    }
}
