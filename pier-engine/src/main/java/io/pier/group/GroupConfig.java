package io.pier.group;

import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configs of one group id: {@code share.*} for a share group and {@code consumer.*} for a
 * consumer-protocol group, the overrides stored for the id, falling back to the broker's
 * {@code group.share.*} ({@link ShareGroupBrokerConfig}) and {@code group.consumer.*} ({@link
 * ConsumerGroupBrokerConfig}) defaults. Also a share group's dead-letter queue (KIP-1191):
 * {@code errors.deadletterqueue.topic.name} and {@code errors.deadletterqueue.copy.record.enable},
 * which have no broker default.
 *
 * <p>Immutable; a change produces a new instance ({@link #withChanges}). Overrides set through
 * {@link #withChanges} are within the broker bounds at the time they are set; overrides restored
 * from a snapshot may not be (the broker bounds may have changed since), so every {@code
 * effective...()} integer is clamped into the current broker bounds, as Kafka 4.3+ does at use.
 */
public final class GroupConfig {

    public static final String CONSUMER_SESSION_TIMEOUT_MS = "consumer.session.timeout.ms";
    public static final String CONSUMER_HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms";
    public static final String SESSION_TIMEOUT_MS = "share.session.timeout.ms";
    public static final String HEARTBEAT_INTERVAL_MS = "share.heartbeat.interval.ms";
    public static final String RECORD_LOCK_DURATION_MS = "share.record.lock.duration.ms";
    public static final String AUTO_OFFSET_RESET = "share.auto.offset.reset";
    public static final String ISOLATION_LEVEL = "share.isolation.level";
    public static final String DELIVERY_COUNT_LIMIT = "share.delivery.count.limit";
    public static final String PARTITION_MAX_RECORD_LOCKS = "share.partition.max.record.locks";
    public static final String RENEW_ACKNOWLEDGE_ENABLE = "share.renew.acknowledge.enable";
    /** The share group's dead-letter topic; empty (the default) for none. */
    public static final String DEAD_LETTER_TOPIC_NAME = "errors.deadletterqueue.topic.name";
    /** Whether a dead-letter record carries the original key and value, or only the context headers. */
    public static final String DEAD_LETTER_COPY_RECORD_ENABLE = "errors.deadletterqueue.copy.record.enable";

    /**
     * Pier's ordering of a share group's records: {@code none} (the default, Kafka's unordered
     * delivery) or {@code key} (a keyed record is delivered only once every earlier record of its
     * key in the partition is settled for good).
     */
    public static final String ORDERING = "pier.share.ordering";
    /** Pier's release backoff: the wait after a record's first release, 0 (the default) for none. */
    public static final String RELEASE_BACKOFF_INITIAL_MS = "pier.share.release.backoff.initial.ms";
    /** How much longer each further release of the same record waits. */
    public static final String RELEASE_BACKOFF_MULTIPLIER = "pier.share.release.backoff.multiplier";
    /** The longest a released record waits. */
    public static final String RELEASE_BACKOFF_MAX_MS = "pier.share.release.backoff.max.ms";
    /** Whether a record whose acquisition lock expired waits as a released one does. */
    public static final String RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE = "pier.share.release.backoff.lock.expiry.enable";
    static final int MAX_BACKOFF_MS = 86_400_000;
    static final double MAX_BACKOFF_MULTIPLIER = 10.0;

    /** The prefix of Kafka's internal topics, which a dead-letter topic name must not have. */
    private static final String INTERNAL_TOPIC_PREFIX = "__";

    /** Every group config name Pier knows, sorted. */
    public static final List<String> NAMES = List.of(
            CONSUMER_HEARTBEAT_INTERVAL_MS,
            CONSUMER_SESSION_TIMEOUT_MS,
            DEAD_LETTER_COPY_RECORD_ENABLE,
            DEAD_LETTER_TOPIC_NAME,
            ORDERING,
            RELEASE_BACKOFF_INITIAL_MS,
            RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE,
            RELEASE_BACKOFF_MAX_MS,
            RELEASE_BACKOFF_MULTIPLIER,
            AUTO_OFFSET_RESET,
            DELIVERY_COUNT_LIMIT,
            HEARTBEAT_INTERVAL_MS,
            ISOLATION_LEVEL,
            PARTITION_MAX_RECORD_LOCKS,
            RECORD_LOCK_DURATION_MS,
            RENEW_ACKNOWLEDGE_ENABLE,
            SESSION_TIMEOUT_MS);

    private static final Logger LOG = LoggerFactory.getLogger(GroupConfig.class);

    private final ShareGroupBrokerConfig broker;
    private final ConsumerGroupBrokerConfig consumer;
    private final Map<String, String> overrides;

    private GroupConfig(ShareGroupBrokerConfig broker, ConsumerGroupBrokerConfig consumer,
            Map<String, String> overrides) {
        this.broker = Objects.requireNonNull(broker, "broker");
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.overrides = Collections.unmodifiableMap(new TreeMap<>(overrides));
    }

    /** A group with no overrides, with Kafka's default {@code group.consumer.*} settings. */
    public static GroupConfig defaults(ShareGroupBrokerConfig broker) {
        return defaults(broker, ConsumerGroupBrokerConfig.DEFAULTS);
    }

    /** A group with no overrides: every value is the broker default. */
    public static GroupConfig defaults(ShareGroupBrokerConfig broker, ConsumerGroupBrokerConfig consumer) {
        return new GroupConfig(broker, consumer, Map.of());
    }

    /**
     * Rebuilds a group's config from persisted overrides without checking the bounds (values are
     * clamped at use). Unknown names and unparsable values are dropped with a warning, so a
     * restart never fails on an old snapshot.
     */
    public static GroupConfig restore(ShareGroupBrokerConfig broker, ConsumerGroupBrokerConfig consumer,
            Map<String, String> overrides) {
        Map<String, String> kept = new TreeMap<>();
        overrides.forEach((name, value) -> {
            if (value == null) {
                return;
            }
            try {
                kept.put(name, parse(name, value));
            } catch (InvalidConfigurationException e) {
                LOG.warn("Dropping stored group config: {}", e.getMessage());
            }
        });
        return new GroupConfig(broker, consumer, kept);
    }

    /**
     * As {@link #withChanges(String, Map)} for a group whose id the caller does not give; a
     * refused dead-letter topic name is reported without it.
     */
    public GroupConfig withChanges(Map<String, String> changes) {
        return withChanges(null, changes);
    }

    /**
     * Applies an IncrementalAlterConfigs-style change set to the configs of {@code groupId}: a
     * non-null value sets the override, a null value deletes it (back to the broker default).
     *
     * <p>A non-empty {@value #DEAD_LETTER_TOPIC_NAME} must not start with {@code __} (Kafka's check
     * and message), must be a legal topic name, and must start with the broker's {@value
     * ShareGroupBrokerConfig#DEAD_LETTER_TOPIC_NAME_PREFIX} unless that is empty. Kafka 4.4 checks
     * the prefix only when it writes to the dead-letter topic; Pier also refuses it here, with
     * the message Kafka gives then. Names restored by {@link #restore} are not checked again.
     *
     * @param groupId the group the configs belong to, named in the error messages; may be null
     * @throws InvalidConfigurationException ({@code Errors.INVALID_CONFIG}) naming the setting, for
     *     an unknown name, an unparsable value or a value outside the broker bounds
     */
    public GroupConfig withChanges(String groupId, Map<String, String> changes) {
        Map<String, String> next = new TreeMap<>(overrides);
        for (Map.Entry<String, String> change : changes.entrySet()) {
            String name = change.getKey();
            if (!NAMES.contains(name)) {
                throw new InvalidConfigurationException("Unknown group config name: " + name);
            }
            if (change.getValue() == null) {
                next.remove(name);
            } else {
                String value = parse(name, change.getValue());
                checkBounds(name, value);
                if (name.equals(DEAD_LETTER_TOPIC_NAME)) {
                    checkDeadLetterTopic(groupId, value);
                }
                next.put(name, value);
            }
        }
        GroupConfig result = new GroupConfig(broker, consumer, next);
        if (result.effectiveHeartbeatIntervalMs() >= result.effectiveSessionTimeoutMs()) {
            throw new InvalidConfigurationException(HEARTBEAT_INTERVAL_MS + " must be less than "
                    + SESSION_TIMEOUT_MS + " (" + result.effectiveHeartbeatIntervalMs() + " >= "
                    + result.effectiveSessionTimeoutMs() + ")");
        }
        if (result.effectiveConsumerHeartbeatIntervalMs() >= result.effectiveConsumerSessionTimeoutMs()) {
            throw new InvalidConfigurationException(CONSUMER_HEARTBEAT_INTERVAL_MS + " must be less than "
                    + CONSUMER_SESSION_TIMEOUT_MS + " (" + result.effectiveConsumerHeartbeatIntervalMs() + " >= "
                    + result.effectiveConsumerSessionTimeoutMs() + ")");
        }
        return result;
    }

    /** The stored overrides, by name (sorted); what a snapshot persists. */
    public Map<String, String> overrides() {
        return overrides;
    }

    public ShareGroupBrokerConfig brokerConfig() {
        return broker;
    }

    /** Every group config with its effective value, sorted by name (for DescribeConfigs). */
    public List<GroupConfigEntry> entries() {
        List<GroupConfigEntry> entries = new ArrayList<>(NAMES.size());
        for (String name : NAMES) {
            entries.add(new GroupConfigEntry(name, effectiveValue(name), !overrides.containsKey(name)));
        }
        return entries;
    }

    /** The effective value of one config as a string, or null for an unknown name. */
    public String effectiveValue(String name) {
        return switch (name) {
            case CONSUMER_SESSION_TIMEOUT_MS -> Integer.toString(effectiveConsumerSessionTimeoutMs());
            case CONSUMER_HEARTBEAT_INTERVAL_MS -> Integer.toString(effectiveConsumerHeartbeatIntervalMs());
            case SESSION_TIMEOUT_MS -> Integer.toString(effectiveSessionTimeoutMs());
            case HEARTBEAT_INTERVAL_MS -> Integer.toString(effectiveHeartbeatIntervalMs());
            case RECORD_LOCK_DURATION_MS -> Integer.toString(effectiveRecordLockDurationMs());
            case AUTO_OFFSET_RESET -> effectiveAutoOffsetReset().toString();
            case ISOLATION_LEVEL -> effectiveIsolationLevel().toString();
            case DELIVERY_COUNT_LIMIT -> Integer.toString(effectiveDeliveryCountLimit());
            case PARTITION_MAX_RECORD_LOCKS -> Integer.toString(effectivePartitionMaxRecordLocks());
            case RENEW_ACKNOWLEDGE_ENABLE -> Boolean.toString(effectiveRenewAcknowledgeEnable());
            case DEAD_LETTER_TOPIC_NAME -> overrides.getOrDefault(DEAD_LETTER_TOPIC_NAME, "");
            case DEAD_LETTER_COPY_RECORD_ENABLE -> Boolean.toString(effectiveDeadLetterCopyRecord());
            case ORDERING -> effectiveOrderByKey() ? "key" : "none";
            case RELEASE_BACKOFF_INITIAL_MS -> Long.toString(effectiveReleaseBackoffInitialMs());
            case RELEASE_BACKOFF_MULTIPLIER -> Double.toString(effectiveReleaseBackoffMultiplier());
            case RELEASE_BACKOFF_MAX_MS -> Long.toString(effectiveReleaseBackoffMaxMs());
            case RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE -> Boolean.toString(effectiveReleaseBackoffLockExpiry());
            default -> null;
        };
    }

    public int effectiveConsumerSessionTimeoutMs() {
        return effectiveInt(CONSUMER_SESSION_TIMEOUT_MS, consumer.sessionTimeoutMs(),
                consumer.minSessionTimeoutMs(), consumer.maxSessionTimeoutMs());
    }

    public int effectiveConsumerHeartbeatIntervalMs() {
        return effectiveInt(CONSUMER_HEARTBEAT_INTERVAL_MS, consumer.heartbeatIntervalMs(),
                consumer.minHeartbeatIntervalMs(), consumer.maxHeartbeatIntervalMs());
    }

    public int effectiveSessionTimeoutMs() {
        return effectiveInt(SESSION_TIMEOUT_MS, broker.sessionTimeoutMs(),
                broker.minSessionTimeoutMs(), broker.maxSessionTimeoutMs());
    }

    public int effectiveHeartbeatIntervalMs() {
        return effectiveInt(HEARTBEAT_INTERVAL_MS, broker.heartbeatIntervalMs(),
                broker.minHeartbeatIntervalMs(), broker.maxHeartbeatIntervalMs());
    }

    public int effectiveRecordLockDurationMs() {
        return effectiveInt(RECORD_LOCK_DURATION_MS, broker.recordLockDurationMs(),
                broker.minRecordLockDurationMs(), broker.maxRecordLockDurationMs());
    }

    public int effectiveDeliveryCountLimit() {
        return effectiveInt(DELIVERY_COUNT_LIMIT, broker.deliveryCountLimit(),
                broker.minDeliveryCountLimit(), broker.maxDeliveryCountLimit());
    }

    public int effectivePartitionMaxRecordLocks() {
        return effectiveInt(PARTITION_MAX_RECORD_LOCKS, broker.partitionMaxRecordLocks(),
                broker.minPartitionMaxRecordLocks(), broker.maxPartitionMaxRecordLocks());
    }

    public AutoOffsetReset effectiveAutoOffsetReset() {
        String value = overrides.get(AUTO_OFFSET_RESET);
        return value == null ? AutoOffsetReset.LATEST : AutoOffsetReset.parse(value);
    }

    /**
     * {@code share.isolation.level}: READ_COMMITTED makes the group's share-partitions acquire only
     * below the last stable offset and never deliver records of aborted transactions. There is no
     * broker default (as in Kafka): a group without the override reads uncommitted.
     */
    public IsolationLevel effectiveIsolationLevel() {
        String value = overrides.get(ISOLATION_LEVEL);
        return "read_committed".equals(value) ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
    }

    public boolean effectiveRenewAcknowledgeEnable() {
        String value = overrides.get(RENEW_ACKNOWLEDGE_ENABLE);
        return value == null || Boolean.parseBoolean(value);
    }

    /**
     * {@value #DEAD_LETTER_TOPIC_NAME}: the topic this share group writes the records it gives up
     * on to, or null when the group has none (the default, or the name set to empty). A name
     * restored from storage is returned as stored, even if the broker's prefix has changed since.
     */
    public String effectiveDeadLetterTopic() {
        String value = overrides.get(DEAD_LETTER_TOPIC_NAME);
        return value == null || value.isEmpty() ? null : value;
    }

    /**
     * {@value #DEAD_LETTER_COPY_RECORD_ENABLE}: whether a dead-letter record carries the original
     * record's key and value, besides the context headers. False by default.
     */
    public boolean effectiveDeadLetterCopyRecord() {
        return Boolean.parseBoolean(overrides.get(DEAD_LETTER_COPY_RECORD_ENABLE));
    }

    /** {@value #ORDERING}: whether the group delivers the records of one key in order, one at a time. */
    public boolean effectiveOrderByKey() {
        return "key".equals(overrides.get(ORDERING));
    }

    /**
     * {@value #RELEASE_BACKOFF_INITIAL_MS} (Pier's): how long a record waits after its first
     * release before it is acquired again; 0, the default, turns release backoff off.
     */
    public long effectiveReleaseBackoffInitialMs() {
        return effectiveInt(RELEASE_BACKOFF_INITIAL_MS, 0, 0, MAX_BACKOFF_MS);
    }

    /** {@value #RELEASE_BACKOFF_MULTIPLIER}: the wait grows by this per further delivery; 2 by default. */
    public double effectiveReleaseBackoffMultiplier() {
        String value = overrides.get(RELEASE_BACKOFF_MULTIPLIER);
        return value == null ? 2.0 : Math.min(MAX_BACKOFF_MULTIPLIER, Math.max(1.0, Double.parseDouble(value)));
    }

    /** {@value #RELEASE_BACKOFF_MAX_MS}: the longest wait; 5 minutes by default. */
    public long effectiveReleaseBackoffMaxMs() {
        return effectiveInt(RELEASE_BACKOFF_MAX_MS, 300_000, 1, MAX_BACKOFF_MS);
    }

    /** {@value #RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE}: whether an expired lock counts as a release; false by default. */
    public boolean effectiveReleaseBackoffLockExpiry() {
        return Boolean.parseBoolean(overrides.get(RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE));
    }

    private int effectiveInt(String name, int brokerDefault, int min, int max) {
        String value = overrides.get(name);
        if (value == null) {
            return brokerDefault;
        }
        return Math.max(min, Math.min(max, Integer.parseInt(value)));
    }

    /** Checks the form of a value and returns its canonical spelling. */
    private static String parse(String name, String raw) {
        String value = raw.trim();
        switch (name) {
            case CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS,
                    SESSION_TIMEOUT_MS, HEARTBEAT_INTERVAL_MS, RECORD_LOCK_DURATION_MS,
                    DELIVERY_COUNT_LIMIT, PARTITION_MAX_RECORD_LOCKS, RELEASE_BACKOFF_INITIAL_MS,
                    RELEASE_BACKOFF_MAX_MS -> {
                try {
                    return Integer.toString(Integer.parseInt(value));
                } catch (NumberFormatException e) {
                    throw new InvalidConfigurationException(
                            name + " must be an integer, got '" + raw + "'");
                }
            }
            case AUTO_OFFSET_RESET -> {
                try {
                    return AutoOffsetReset.parse(value).toString();
                } catch (IllegalArgumentException e) {
                    throw new InvalidConfigurationException(name + ": " + e.getMessage());
                }
            }
            case ISOLATION_LEVEL -> {
                String lower = value.toLowerCase(Locale.ROOT);
                if (lower.equals("read_uncommitted") || lower.equals("read_committed")) {
                    return lower;
                }
                throw new InvalidConfigurationException(
                        name + " must be read_committed or read_uncommitted, got '" + raw + "'");
            }
            case DEAD_LETTER_TOPIC_NAME -> {
                // A string config: trimmed, as Kafka's ConfigDef does; empty means no topic.
                return value;
            }
            case ORDERING -> {
                String lower = value.toLowerCase(Locale.ROOT);
                if (lower.equals("none") || lower.equals("key")) {
                    return lower;
                }
                throw new InvalidConfigurationException(name + " must be none or key, got '" + raw + "'");
            }
            case RELEASE_BACKOFF_MULTIPLIER -> {
                try {
                    double d = Double.parseDouble(value);
                    if (!Double.isFinite(d)) {
                        throw new NumberFormatException();
                    }
                    return Double.toString(d);
                } catch (NumberFormatException e) {
                    throw new InvalidConfigurationException(name + " must be a number, got '" + raw + "'");
                }
            }
            case RENEW_ACKNOWLEDGE_ENABLE, DEAD_LETTER_COPY_RECORD_ENABLE, RELEASE_BACKOFF_LOCK_EXPIRY_ENABLE -> {
                String lower = value.toLowerCase(Locale.ROOT);
                if (lower.equals("true") || lower.equals("false")) {
                    return lower;
                }
                throw new InvalidConfigurationException(
                        name + " must be true or false, got '" + raw + "'");
            }
            default -> throw new InvalidConfigurationException("Unknown group config name: " + name);
        }
    }

    private void checkBounds(String name, String value) {
        switch (name) {
            case CONSUMER_SESSION_TIMEOUT_MS -> checkRange(name, value, consumer.minSessionTimeoutMs(),
                    consumer.maxSessionTimeoutMs());
            case CONSUMER_HEARTBEAT_INTERVAL_MS -> checkRange(name, value, consumer.minHeartbeatIntervalMs(),
                    consumer.maxHeartbeatIntervalMs());
            case SESSION_TIMEOUT_MS -> checkRange(name, value, broker.minSessionTimeoutMs(),
                    broker.maxSessionTimeoutMs());
            case HEARTBEAT_INTERVAL_MS -> checkRange(name, value, broker.minHeartbeatIntervalMs(),
                    broker.maxHeartbeatIntervalMs());
            case RECORD_LOCK_DURATION_MS -> checkRange(name, value, broker.minRecordLockDurationMs(),
                    broker.maxRecordLockDurationMs());
            case DELIVERY_COUNT_LIMIT -> checkRange(name, value, broker.minDeliveryCountLimit(),
                    broker.maxDeliveryCountLimit());
            case PARTITION_MAX_RECORD_LOCKS -> checkRange(name, value,
                    broker.minPartitionMaxRecordLocks(), broker.maxPartitionMaxRecordLocks());
            case RELEASE_BACKOFF_INITIAL_MS -> checkRange(name, value, 0, MAX_BACKOFF_MS);
            case RELEASE_BACKOFF_MAX_MS -> checkRange(name, value, 1, MAX_BACKOFF_MS);
            case RELEASE_BACKOFF_MULTIPLIER -> {
                double d = Double.parseDouble(value);
                if (d < 1.0 || d > MAX_BACKOFF_MULTIPLIER) {
                    throw new InvalidConfigurationException(
                            name + " must be between 1.0 and " + MAX_BACKOFF_MULTIPLIER + ", got " + value);
                }
            }
            default -> {
                // Not bounded by broker settings.
            }
        }
    }

    /** The checks on a new dead-letter topic name, in Kafka's order; an empty name means none. */
    private void checkDeadLetterTopic(String groupId, String topic) {
        if (topic.isEmpty()) {
            return;
        }
        if (topic.startsWith(INTERNAL_TOPIC_PREFIX)) {
            throw new InvalidConfigurationException(
                    DEAD_LETTER_TOPIC_NAME + ": DLQ topic name must not start with '__'");
        }
        try {
            Topic.validate(topic);
        } catch (InvalidTopicException e) {
            throw new InvalidConfigurationException(DEAD_LETTER_TOPIC_NAME + ": " + e.getMessage());
        }
        String prefix = broker.deadLetterTopicPrefix();
        if (!prefix.isEmpty() && !topic.startsWith(prefix)) {
            throw new InvalidConfigurationException(
                    "Configured DLQ topic name does not comply with the DLQ topic prefix"
                            + (groupId == null ? "" : " in share group: " + groupId)
                            + ", topic: " + topic + ", prefix: " + prefix + ".");
        }
    }

    private static void checkRange(String name, String value, int min, int max) {
        int v = Integer.parseInt(value);
        if (v < min) {
            throw new InvalidConfigurationException(name + " must be greater than or equal to " + min);
        }
        if (v > max) {
            throw new InvalidConfigurationException(name + " must be less than or equal to " + max);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GroupConfig other
                && broker.equals(other.broker)
                && consumer.equals(other.consumer)
                && overrides.equals(other.overrides);
    }

    @Override
    public int hashCode() {
        return Objects.hash(broker, consumer, overrides);
    }

    @Override
    public String toString() {
        return "GroupConfig" + overrides;
    }
}
