package io.pier.log;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;

/**
 * Settings of one partition log, immutable. Built from broker properties (defaults for every
 * topic) and then topic-level overrides, both using Kafka's configuration names so existing
 * tooling and client code work unchanged.
 *
 * @param segmentBytes roll the active segment when the next batch would push it past this size
 * @param segmentMs roll the active segment this long after its first append
 * @param retentionMs delete closed segments whose newest record is older than this; -1 keeps forever
 * @param retentionBytes delete the oldest closed segments while the log is larger; -1 means no limit
 * @param maxMessageBytes largest accepted record batch, in bytes
 * @param indexIntervalBytes bytes of log between two sparse index entries
 * @param logAppendTime stamp batches with the broker's time (LogAppendTime) instead of CreateTime
 * @param durability when appended data counts as committed
 * @param cleanupPolicy cleanup.policy: whether retention deletes, whether records need keys
 * @param preallocateBytes 0, or how far ahead of the data the active segment's file is filled with
 *     zeros (see {@link LogSegment}): an fdatasync after writing into bytes the file already has
 *     needs no journal commit. For the broker's own small-record state logs, not for topics
 * @param timestampBeforeMaxMs with CreateTime, how far behind the broker's clock a record's
 *     timestamp may be (message.timestamp.before.max.ms; Kafka's default: no limit)
 * @param timestampAfterMaxMs with CreateTime, how far ahead of the broker's clock a record's
 *     timestamp may be (message.timestamp.after.max.ms; Kafka's default since 4.0: one hour)
 * @param deadLetterGroupEnable errors.deadletterqueue.group.enable (KIP-1191): whether share groups
 *     may use this topic as their dead-letter topic. A topic-level setting only (no broker
 *     default, as in Kafka), false unless set; it changes nothing in the log itself
 */
public record LogConfig(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes,
        int maxMessageBytes, int indexIntervalBytes, boolean logAppendTime, Durability durability,
        CleanupPolicy cleanupPolicy, int preallocateBytes, long timestampBeforeMaxMs, long timestampAfterMaxMs,
        boolean deadLetterGroupEnable) {

    // Topic-level names, as Kafka spells them.
    static final String SEGMENT_BYTES = "segment.bytes";
    static final String SEGMENT_MS = "segment.ms";
    static final String RETENTION_MS = "retention.ms";
    static final String RETENTION_BYTES = "retention.bytes";
    static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    static final String TIMESTAMP_TYPE = "message.timestamp.type";
    static final String CLEANUP_POLICY = "cleanup.policy";
    static final String TIMESTAMP_BEFORE_MAX_MS = "message.timestamp.before.max.ms";
    static final String TIMESTAMP_AFTER_MAX_MS = "message.timestamp.after.max.ms";
    public static final String DEAD_LETTER_GROUP_ENABLE = "errors.deadletterqueue.group.enable";

    /** Kafka's defaults of {@link #TIMESTAMP_BEFORE_MAX_MS} and {@link #TIMESTAMP_AFTER_MAX_MS}. */
    static final long DEFAULT_TIMESTAMP_BEFORE_MAX_MS = Long.MAX_VALUE;
    static final long DEFAULT_TIMESTAMP_AFTER_MAX_MS = 3_600_000L;

    /** Smallest segment that can hold a record at all; matches Kafka's historic lower bound. */
    static final long MIN_SEGMENT_BYTES = 14;

    private static final String CREATE_TIME = "CreateTime";
    private static final String LOG_APPEND_TIME = "LogAppendTime";

    public LogConfig {
        // Positions inside a segment are ints (file format and index entries), hence the cap.
        require(segmentBytes >= MIN_SEGMENT_BYTES && segmentBytes <= Integer.MAX_VALUE, SEGMENT_BYTES, segmentBytes);
        require(segmentMs >= 1, SEGMENT_MS, segmentMs);
        require(retentionMs >= -1, RETENTION_MS, retentionMs);
        require(retentionBytes >= -1, RETENTION_BYTES, retentionBytes);
        require(maxMessageBytes >= 0, MAX_MESSAGE_BYTES, maxMessageBytes);
        require(indexIntervalBytes >= 0, INDEX_INTERVAL_BYTES, indexIntervalBytes);
        require(preallocateBytes >= 0, "preallocate bytes", preallocateBytes);
        require(timestampBeforeMaxMs >= 0, TIMESTAMP_BEFORE_MAX_MS, timestampBeforeMaxMs);
        require(timestampAfterMaxMs >= 0, TIMESTAMP_AFTER_MAX_MS, timestampAfterMaxMs);
        if (durability == null || cleanupPolicy == null) {
            throw new IllegalArgumentException("durability and cleanup.policy must be set");
        }
    }

    /** Not a dead-letter topic. */
    public LogConfig(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes, int maxMessageBytes,
            int indexIntervalBytes, boolean logAppendTime, Durability durability, CleanupPolicy cleanupPolicy,
            int preallocateBytes, long timestampBeforeMaxMs, long timestampAfterMaxMs) {
        this(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexIntervalBytes, logAppendTime,
                durability, cleanupPolicy, preallocateBytes, timestampBeforeMaxMs, timestampAfterMaxMs, false);
    }

    /** With Kafka's default timestamp bounds. */
    public LogConfig(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes, int maxMessageBytes,
            int indexIntervalBytes, boolean logAppendTime, Durability durability, CleanupPolicy cleanupPolicy,
            int preallocateBytes) {
        this(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexIntervalBytes, logAppendTime,
                durability, cleanupPolicy, preallocateBytes, DEFAULT_TIMESTAMP_BEFORE_MAX_MS,
                DEFAULT_TIMESTAMP_AFTER_MAX_MS);
    }

    /** Without preallocation. */
    public LogConfig(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes, int maxMessageBytes,
            int indexIntervalBytes, boolean logAppendTime, Durability durability, CleanupPolicy cleanupPolicy) {
        this(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexIntervalBytes, logAppendTime,
                durability, cleanupPolicy, 0);
    }

    /** With cleanup.policy=delete, Kafka's default, and no preallocation. */
    public LogConfig(long segmentBytes, long segmentMs, long retentionMs, long retentionBytes, int maxMessageBytes,
            int indexIntervalBytes, boolean logAppendTime, Durability durability) {
        this(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexIntervalBytes, logAppendTime,
                durability, CleanupPolicy.DELETE);
    }

    private static void require(boolean ok, String name, long value) {
        if (!ok) {
            throw new IllegalArgumentException("invalid value " + value + " for " + name);
        }
    }

    /** Kafka's defaults, with {@link Durability#DURABLE}. */
    public static LogConfig defaults() {
        return new LogConfig(1073741824L, 604800000L, 604800000L, -1L, 1048588, 4096, false, Durability.DURABLE);
    }

    /**
     * Broker-level settings (Kafka names: log.segment.bytes, log.roll.ms, log.roll.hours,
     * log.retention.ms, log.retention.minutes, log.retention.hours, log.retention.bytes,
     * message.max.bytes, log.index.interval.bytes, log.message.timestamp.type,
     * log.message.timestamp.before.max.ms, log.message.timestamp.after.max.ms, log.cleanup.policy, and
     * pier.log.durability = durable|none) to defaults for topics. Unknown keys are ignored here
     * because the server keeps its other settings in the same map. A bad value throws
     * {@link ConfigException} naming the setting.
     */
    public static LogConfig fromBrokerProperties(Map<String, String> props) {
        LogConfig d = defaults();
        try {
            long segmentBytes = longOr(props, "log.segment.bytes", d.segmentBytes);
            // As in Kafka, the finer-grained unit wins when several are given.
            long segmentMs = props.get("log.roll.ms") != null
                    ? parseLong("log.roll.ms", props.get("log.roll.ms"))
                    : props.get("log.roll.hours") != null
                            ? Math.multiplyExact(parseLong("log.roll.hours", props.get("log.roll.hours")), 3_600_000L)
                            : d.segmentMs;
            long retentionMs = brokerRetentionMs(props, d.retentionMs);
            long retentionBytes = longOr(props, "log.retention.bytes", d.retentionBytes);
            int maxMessageBytes = intOr(props, "message.max.bytes", d.maxMessageBytes);
            int indexInterval = intOr(props, "log.index.interval.bytes", d.indexIntervalBytes);
            String tsType = props.get("log.message.timestamp.type");
            boolean logAppendTime = tsType == null ? d.logAppendTime : parseTimestampType("log.message.timestamp.type", tsType);
            String dur = props.get("pier.log.durability");
            Durability durability = dur == null ? d.durability : parseDurability(dur);
            String policy = props.get("log.cleanup.policy");
            CleanupPolicy cleanupPolicy = policy == null ? d.cleanupPolicy : parseCleanupPolicy("log.cleanup.policy", policy);
            checkBroker("log.segment.bytes", segmentBytes, segmentBytes >= MIN_SEGMENT_BYTES && segmentBytes <= Integer.MAX_VALUE);
            checkBroker(props.get("log.roll.ms") != null ? "log.roll.ms" : "log.roll.hours", segmentMs, segmentMs >= 1);
            checkBroker(retentionName(props), retentionMs, retentionMs >= -1);
            checkBroker("log.retention.bytes", retentionBytes, retentionBytes >= -1);
            checkBroker("message.max.bytes", maxMessageBytes, maxMessageBytes >= 0);
            checkBroker("log.index.interval.bytes", indexInterval, indexInterval >= 0);
            long before = longOr(props, "log.message.timestamp.before.max.ms", d.timestampBeforeMaxMs);
            long after = longOr(props, "log.message.timestamp.after.max.ms", d.timestampAfterMaxMs);
            checkBroker("log.message.timestamp.before.max.ms", before, before >= 0);
            checkBroker("log.message.timestamp.after.max.ms", after, after >= 0);
            return new LogConfig(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexInterval,
                    logAppendTime, durability, cleanupPolicy, 0, before, after);
        } catch (BadValue e) {
            throw new ConfigException(e.name, e.value, e.getMessage());
        } catch (ArithmeticException e) {
            throw new ConfigException("log.roll.hours or log.retention.* overflows a long: " + e.getMessage());
        }
    }

    private static long brokerRetentionMs(Map<String, String> props, long dflt) {
        String name = retentionName(props);
        if (name == null) {
            return dflt;
        }
        long v = parseLong(name, props.get(name));
        if (v < 0 || name.equals("log.retention.ms")) {
            return v; // a negative value means "forever" whatever the unit
        }
        return Math.multiplyExact(v, name.equals("log.retention.minutes") ? 60_000L : 3_600_000L);
    }

    private static String retentionName(Map<String, String> props) {
        for (String n : new String[] {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}) {
            if (props.get(n) != null) {
                return n;
            }
        }
        return null;
    }

    private static void checkBroker(String name, long value, boolean ok) {
        if (!ok) {
            throw new BadValue(name, String.valueOf(value), "out of range");
        }
    }

    /**
     * Topic-level overrides (segment.bytes, segment.ms, retention.ms, retention.bytes,
     * max.message.bytes, index.interval.bytes, message.timestamp.type,
     * message.timestamp.before.max.ms, message.timestamp.after.max.ms, cleanup.policy, see
     * {@link CleanupPolicy}, errors.deadletterqueue.group.enable) applied over {@code brokerDefaults}. A null value means
     * "no override". An unknown name or bad value throws {@link InvalidConfigurationException}
     * naming the setting, which the server maps to INVALID_CONFIG.
     */
    public static LogConfig withTopicOverrides(LogConfig brokerDefaults, Map<String, String> topicConfigs) {
        long segmentBytes = brokerDefaults.segmentBytes;
        long segmentMs = brokerDefaults.segmentMs;
        long retentionMs = brokerDefaults.retentionMs;
        long retentionBytes = brokerDefaults.retentionBytes;
        int maxMessageBytes = brokerDefaults.maxMessageBytes;
        int indexInterval = brokerDefaults.indexIntervalBytes;
        boolean logAppendTime = brokerDefaults.logAppendTime;
        CleanupPolicy cleanupPolicy = brokerDefaults.cleanupPolicy;
        long before = brokerDefaults.timestampBeforeMaxMs;
        long after = brokerDefaults.timestampAfterMaxMs;
        boolean deadLetterGroupEnable = brokerDefaults.deadLetterGroupEnable;
        try {
            for (Map.Entry<String, String> e : topicConfigs.entrySet()) {
                String name = e.getKey();
                String v = e.getValue();
                if (!TOPIC_NAMES.contains(name)) {
                    throw new InvalidConfigurationException("unknown topic config " + name);
                }
                if (v == null) {
                    continue;
                }
                switch (name) {
                    case SEGMENT_BYTES -> segmentBytes = ranged(name, parseLong(name, v), MIN_SEGMENT_BYTES, Integer.MAX_VALUE);
                    case SEGMENT_MS -> segmentMs = ranged(name, parseLong(name, v), 1, Long.MAX_VALUE);
                    case RETENTION_MS -> retentionMs = ranged(name, parseLong(name, v), -1, Long.MAX_VALUE);
                    case RETENTION_BYTES -> retentionBytes = ranged(name, parseLong(name, v), -1, Long.MAX_VALUE);
                    case MAX_MESSAGE_BYTES -> maxMessageBytes = (int) ranged(name, parseInt(name, v), 0, Integer.MAX_VALUE);
                    case INDEX_INTERVAL_BYTES -> indexInterval = (int) ranged(name, parseInt(name, v), 0, Integer.MAX_VALUE);
                    case TIMESTAMP_TYPE -> logAppendTime = parseTimestampType(name, v);
                    case CLEANUP_POLICY -> cleanupPolicy = parseCleanupPolicy(name, v);
                    case TIMESTAMP_BEFORE_MAX_MS -> before = ranged(name, parseLong(name, v), 0, Long.MAX_VALUE);
                    case TIMESTAMP_AFTER_MAX_MS -> after = ranged(name, parseLong(name, v), 0, Long.MAX_VALUE);
                    case DEAD_LETTER_GROUP_ENABLE -> deadLetterGroupEnable = parseBoolean(name, v);
                    default -> throw new IllegalStateException("unhandled topic config " + name);
                }
            }
        } catch (BadValue e) {
            throw new InvalidConfigurationException(
                    "invalid value " + e.value + " for topic config " + e.name + ": " + e.getMessage());
        }
        return new LogConfig(segmentBytes, segmentMs, retentionMs, retentionBytes, maxMessageBytes, indexInterval,
                logAppendTime, brokerDefaults.durability, cleanupPolicy, brokerDefaults.preallocateBytes, before, after,
                deadLetterGroupEnable);
    }

    private static final Set<String> TOPIC_NAMES = Set.of(SEGMENT_BYTES, SEGMENT_MS, RETENTION_MS, RETENTION_BYTES,
            MAX_MESSAGE_BYTES, INDEX_INTERVAL_BYTES, TIMESTAMP_TYPE, CLEANUP_POLICY, TIMESTAMP_BEFORE_MAX_MS,
            TIMESTAMP_AFTER_MAX_MS, DEAD_LETTER_GROUP_ENABLE);

    /** Every topic config name {@link #withTopicOverrides} understands. */
    public static Set<String> topicConfigNames() {
        return TOPIC_NAMES;
    }

    /** Every supported topic config name mapped to its effective value as Kafka prints it. */
    public Map<String, String> asTopicConfigs() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(CLEANUP_POLICY, cleanupPolicy.toString());
        m.put(DEAD_LETTER_GROUP_ENABLE, Boolean.toString(deadLetterGroupEnable));
        m.put(INDEX_INTERVAL_BYTES, Integer.toString(indexIntervalBytes));
        m.put(MAX_MESSAGE_BYTES, Integer.toString(maxMessageBytes));
        m.put(TIMESTAMP_AFTER_MAX_MS, Long.toString(timestampAfterMaxMs));
        m.put(TIMESTAMP_BEFORE_MAX_MS, Long.toString(timestampBeforeMaxMs));
        m.put(TIMESTAMP_TYPE, logAppendTime ? LOG_APPEND_TIME : CREATE_TIME);
        m.put(RETENTION_BYTES, Long.toString(retentionBytes));
        m.put(RETENTION_MS, Long.toString(retentionMs));
        m.put(SEGMENT_BYTES, Long.toString(segmentBytes));
        m.put(SEGMENT_MS, Long.toString(segmentMs));
        return m;
    }

    private static long ranged(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new BadValue(name, Long.toString(v), "must be between " + min + " and " + max);
        }
        return v;
    }

    private static long longOr(Map<String, String> props, String name, long dflt) {
        String v = props.get(name);
        return v == null ? dflt : parseLong(name, v);
    }

    private static int intOr(Map<String, String> props, String name, int dflt) {
        String v = props.get(name);
        return v == null ? dflt : parseInt(name, v);
    }

    private static long parseLong(String name, String v) {
        return parse(name, v, Long::parseLong);
    }

    private static int parseInt(String name, String v) {
        return parse(name, v, Integer::parseInt);
    }

    private static <T> T parse(String name, String v, Function<String, T> parser) {
        try {
            return parser.apply(v.trim());
        } catch (NumberFormatException e) {
            throw new BadValue(name, v, "not a number");
        }
    }

    /** As Kafka's boolean configs: true or false in any case, around spaces. */
    private static boolean parseBoolean(String name, String v) {
        String t = v.trim();
        if (t.equalsIgnoreCase("true")) {
            return true;
        }
        if (t.equalsIgnoreCase("false")) {
            return false;
        }
        throw new BadValue(name, v, "Expected value to be either true or false");
    }

    private static boolean parseTimestampType(String name, String v) {
        return switch (v.trim()) {
            case CREATE_TIME -> false;
            case LOG_APPEND_TIME -> true;
            default -> throw new BadValue(name, v, "expected CreateTime or LogAppendTime");
        };
    }

    private static CleanupPolicy parseCleanupPolicy(String name, String v) {
        try {
            return CleanupPolicy.parse(v);
        } catch (IllegalArgumentException e) {
            throw new BadValue(name, v, e.getMessage());
        }
    }

    private static Durability parseDurability(String v) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "durable" -> Durability.DURABLE;
            case "none" -> Durability.NONE;
            default -> throw new BadValue("pier.log.durability", v, "expected durable or none");
        };
    }

    /** Carries the offending name and value up to the entry point, which picks the exception type. */
    private static final class BadValue extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String name;
        final String value;

        BadValue(String name, String value, String why) {
            super(why, null, false, false);
            this.name = name;
            this.value = value;
        }
    }
}
