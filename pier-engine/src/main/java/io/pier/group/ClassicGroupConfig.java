package io.pier.group;

import java.util.Map;

/**
 * Broker settings of classic groups, Kafka's names and defaults.
 *
 * @param minSessionTimeoutMs {@code group.min.session.timeout.ms}
 * @param maxSessionTimeoutMs {@code group.max.session.timeout.ms}
 * @param initialRebalanceDelayMs {@code group.initial.rebalance.delay.ms}: how long an Empty
 *     group waits for more members before its first generation
 * @param maxSize {@code group.max.size}
 * @param newMemberJoinTimeoutMs how long a new member's parked JoinGroup is kept (Kafka: 5 min)
 * @param maxGroupRecordBytes {@code message.max.bytes}: Kafka stores a classic group's members'
 *     subscriptions and assignments as one record of its offsets topic, so a group whose metadata
 *     would not fit one record is refused (UNKNOWN_SERVER_ERROR) before anything changes
 */
public record ClassicGroupConfig(int minSessionTimeoutMs, int maxSessionTimeoutMs, int initialRebalanceDelayMs,
        int maxSize, int newMemberJoinTimeoutMs, int maxGroupRecordBytes) {
    public static final ClassicGroupConfig DEFAULTS = new ClassicGroupConfig(6_000, 1_800_000, 3_000,
            Integer.MAX_VALUE, 300_000, 1_048_588);

    public ClassicGroupConfig {
        if (minSessionTimeoutMs < 0 || maxSessionTimeoutMs < minSessionTimeoutMs || initialRebalanceDelayMs < 0
                || maxSize < 1 || newMemberJoinTimeoutMs < 1 || maxGroupRecordBytes < 0) {
            throw new IllegalArgumentException("bad classic group settings");
        }
    }

    public static ClassicGroupConfig fromProperties(Map<String, String> props) {
        return new ClassicGroupConfig(
                BrokerSettings.intOf(props, "group.min.session.timeout.ms", DEFAULTS.minSessionTimeoutMs),
                BrokerSettings.intOf(props, "group.max.session.timeout.ms", DEFAULTS.maxSessionTimeoutMs),
                BrokerSettings.intOf(props, "group.initial.rebalance.delay.ms", DEFAULTS.initialRebalanceDelayMs),
                BrokerSettings.intOf(props, "group.max.size", DEFAULTS.maxSize),
                DEFAULTS.newMemberJoinTimeoutMs,
                BrokerSettings.intOf(props, "message.max.bytes", DEFAULTS.maxGroupRecordBytes));
    }
}
