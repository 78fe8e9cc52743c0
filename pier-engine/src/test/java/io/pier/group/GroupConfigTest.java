package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.group.consumer.ConsumerGroupBrokerConfig;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

class GroupConfigTest {

    private final GroupConfig defaults = GroupConfig.defaults(ShareGroupBrokerConfig.DEFAULTS);

    @Test
    void shouldFallBackToBrokerDefaults() {
        ShareGroupBrokerConfig broker = ShareGroupBrokerConfig.fromProperties(Map.of(
                "group.share.record.lock.duration.ms", "20000",
                "group.share.delivery.count.limit", "3"));
        GroupConfig config = GroupConfig.defaults(broker);

        assertThat(config.effectiveSessionTimeoutMs()).isEqualTo(45_000);
        assertThat(config.effectiveHeartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(config.effectiveRecordLockDurationMs()).isEqualTo(20_000);
        assertThat(config.effectiveDeliveryCountLimit()).isEqualTo(3);
        assertThat(config.effectivePartitionMaxRecordLocks()).isEqualTo(2_000);
        assertThat(config.effectiveAutoOffsetReset()).isEqualTo(AutoOffsetReset.LATEST);
        assertThat(config.effectiveIsolationLevel()).isEqualTo(IsolationLevel.READ_UNCOMMITTED);
        assertThat(config.effectiveRenewAcknowledgeEnable()).isTrue();
    }

    @Test
    void shouldApplyOverridesWithinBounds() {
        GroupConfig config = defaults.withChanges(Map.of(
                "share.session.timeout.ms", "60000",
                "share.heartbeat.interval.ms", "15000",
                "share.record.lock.duration.ms", "15000",
                "share.delivery.count.limit", "10",
                "share.partition.max.record.locks", "100",
                "share.auto.offset.reset", "earliest",
                "share.isolation.level", "read_uncommitted",
                "share.renew.acknowledge.enable", "false"));

        assertThat(config.effectiveSessionTimeoutMs()).isEqualTo(60_000);
        assertThat(config.effectiveHeartbeatIntervalMs()).isEqualTo(15_000);
        assertThat(config.effectiveRecordLockDurationMs()).isEqualTo(15_000);
        assertThat(config.effectiveDeliveryCountLimit()).isEqualTo(10);
        assertThat(config.effectivePartitionMaxRecordLocks()).isEqualTo(100);
        assertThat(config.effectiveAutoOffsetReset()).isEqualTo(AutoOffsetReset.EARLIEST);
        assertThat(config.effectiveRenewAcknowledgeEnable()).isFalse();
    }

    @Test
    void shouldRejectEachValueOutsideBrokerBounds() {
        assertInvalid("share.session.timeout.ms", "44999", "share.session.timeout.ms must be greater than or equal to 45000");
        assertInvalid("share.session.timeout.ms", "60001", "share.session.timeout.ms must be less than or equal to 60000");
        assertInvalid("share.heartbeat.interval.ms", "4999", "share.heartbeat.interval.ms must be greater than or equal to 5000");
        assertInvalid("share.heartbeat.interval.ms", "15001", "share.heartbeat.interval.ms must be less than or equal to 15000");
        assertInvalid("share.record.lock.duration.ms", "14999", "share.record.lock.duration.ms must be greater than or equal to 15000");
        assertInvalid("share.record.lock.duration.ms", "60001", "share.record.lock.duration.ms must be less than or equal to 60000");
        assertInvalid("share.delivery.count.limit", "1", "share.delivery.count.limit must be greater than or equal to 2");
        assertInvalid("share.delivery.count.limit", "11", "share.delivery.count.limit must be less than or equal to 10");
        assertInvalid("share.partition.max.record.locks", "99", "share.partition.max.record.locks must be greater than or equal to 100");
        assertInvalid("share.partition.max.record.locks", "4001", "share.partition.max.record.locks must be less than or equal to 4000");
    }

    @Test
    void shouldFollowLoweredBrokerBounds() {
        ShareGroupBrokerConfig broker = ShareGroupBrokerConfig.fromProperties(Map.of(
                "group.share.min.record.lock.duration.ms", "1000"));

        GroupConfig config = GroupConfig.defaults(broker).withChanges(Map.of("share.record.lock.duration.ms", "1000"));

        assertThat(config.effectiveRecordLockDurationMs()).isEqualTo(1_000);
    }

    @Test
    void shouldRejectNonIntegers() {
        assertInvalid("share.session.timeout.ms", "fast", "share.session.timeout.ms must be an integer");
        assertInvalid("share.renew.acknowledge.enable", "yes", "share.renew.acknowledge.enable must be true or false");
    }

    @Test
    void shouldHonourReadCommittedAndRefuseOtherLevels() {
        GroupConfig committed = defaults.withChanges(Map.of("share.isolation.level", "READ_COMMITTED"));

        assertThat(committed.effectiveIsolationLevel()).isEqualTo(IsolationLevel.READ_COMMITTED);
        assertThat(committed.effectiveValue("share.isolation.level")).isEqualTo("read_committed");
        assertThat(committed.overrides()).containsEntry("share.isolation.level", "read_committed");
        assertThat(committed.withChanges(Collections.singletonMap("share.isolation.level", null))
                .effectiveIsolationLevel()).isEqualTo(IsolationLevel.READ_UNCOMMITTED);
        assertThat(GroupConfig.restore(ShareGroupBrokerConfig.DEFAULTS, ConsumerGroupBrokerConfig.DEFAULTS,
                Map.of("share.isolation.level", "read_committed")).effectiveIsolationLevel())
                .isEqualTo(IsolationLevel.READ_COMMITTED);
        assertInvalid("share.isolation.level", "snapshot", "share.isolation.level must be read_committed or read_uncommitted");
    }

    @Test
    void shouldRejectUnknownConfigName() {
        assertThatThrownBy(() -> defaults.withChanges(Map.of("share.colour", "blue")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("share.colour");
    }

    @Test
    void shouldRejectHeartbeatIntervalNotBelowSessionTimeout() {
        ShareGroupBrokerConfig broker = ShareGroupBrokerConfig.fromProperties(Map.of(
                "group.share.min.session.timeout.ms", "1000",
                "group.share.session.timeout.ms", "10000"));

        assertThatThrownBy(() -> GroupConfig.defaults(broker).withChanges(Map.of("share.session.timeout.ms", "5000")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("share.heartbeat.interval.ms must be less than share.session.timeout.ms");
    }

    @Test
    void shouldMapValidationFailuresToInvalidConfig() {
        try {
            defaults.withChanges(Map.of("share.delivery.count.limit", "0"));
        } catch (InvalidConfigurationException e) {
            assertThat(Errors.forException(e)).isEqualTo(Errors.INVALID_CONFIG);
            return;
        }
        throw new AssertionError("expected InvalidConfigurationException");
    }

    @Test
    void shouldParseAutoOffsetResetByDuration() {
        GroupConfig config = defaults.withChanges(Map.of("share.auto.offset.reset", "by_duration:PT1H30M"));

        assertThat(config.effectiveAutoOffsetReset())
                .isEqualTo(AutoOffsetReset.byDuration(Duration.ofMinutes(90)));
        assertThat(config.effectiveAutoOffsetReset().strategy()).isEqualTo(AutoOffsetReset.Strategy.BY_DURATION);
        assertThat(config.effectiveValue("share.auto.offset.reset")).isEqualTo("by_duration:PT1H30M");
        assertThat(AutoOffsetReset.parse("BY_DURATION:P1D").duration()).isEqualTo(Duration.ofDays(1));
        assertThat(AutoOffsetReset.parse("by_duration:PT0S").duration()).isEqualTo(Duration.ZERO);
        assertThat(AutoOffsetReset.parse("Latest")).isEqualTo(AutoOffsetReset.LATEST);
    }

    @Test
    void shouldRejectBadAutoOffsetReset() {
        assertInvalid("share.auto.offset.reset", "by_duration:-PT1H", "share.auto.offset.reset");
        assertInvalid("share.auto.offset.reset", "by_duration:an hour", "ISO-8601");
        assertInvalid("share.auto.offset.reset", "by_duration:", "share.auto.offset.reset");
        assertInvalid("share.auto.offset.reset", "none", "share.auto.offset.reset");
    }

    @Test
    void shouldDeleteOverrideWithNullValue() {
        GroupConfig set = defaults.withChanges(Map.of("share.record.lock.duration.ms", "20000"));
        Map<String, String> delete = new HashMap<>();
        delete.put("share.record.lock.duration.ms", null);

        GroupConfig reverted = set.withChanges(delete);

        assertThat(reverted.effectiveRecordLockDurationMs()).isEqualTo(30_000);
        assertThat(reverted.overrides()).isEmpty();
    }

    @Test
    void shouldBoundConsumerTimingsByTheGroupConsumerBrokerSettings() {
        assertThat(defaults.withChanges(Map.of("consumer.session.timeout.ms", "50000"))
                .effectiveConsumerSessionTimeoutMs()).isEqualTo(50_000);
        assertThatThrownBy(() -> defaults.withChanges(Map.of("consumer.session.timeout.ms", "1000")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("consumer.session.timeout.ms must be greater than or equal to 45000");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("consumer.heartbeat.interval.ms", "20000")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("consumer.heartbeat.interval.ms must be less than or equal to 15000");
    }

    @Test
    void shouldListEveryConfigWithDefaultFlag() {
        GroupConfig config = defaults.withChanges(Map.of("share.delivery.count.limit", "7"));

        assertThat(config.entries()).containsExactly(
                new GroupConfigEntry("consumer.heartbeat.interval.ms", "5000", true),
                new GroupConfigEntry("consumer.session.timeout.ms", "45000", true),
                new GroupConfigEntry("errors.deadletterqueue.copy.record.enable", "false", true),
                new GroupConfigEntry("errors.deadletterqueue.topic.name", "", true),
                new GroupConfigEntry("pier.share.ordering", "none", true),
                new GroupConfigEntry("pier.share.release.backoff.initial.ms", "0", true),
                new GroupConfigEntry("pier.share.release.backoff.lock.expiry.enable", "false", true),
                new GroupConfigEntry("pier.share.release.backoff.max.ms", "300000", true),
                new GroupConfigEntry("pier.share.release.backoff.multiplier", "2.0", true),
                new GroupConfigEntry("share.auto.offset.reset", "latest", true),
                new GroupConfigEntry("share.delivery.count.limit", "7", false),
                new GroupConfigEntry("share.heartbeat.interval.ms", "5000", true),
                new GroupConfigEntry("share.isolation.level", "read_uncommitted", true),
                new GroupConfigEntry("share.partition.max.record.locks", "2000", true),
                new GroupConfigEntry("share.record.lock.duration.ms", "30000", true),
                new GroupConfigEntry("share.renew.acknowledge.enable", "true", true),
                new GroupConfigEntry("share.session.timeout.ms", "45000", true));
    }

    @Test
    void shouldValidateTheOrdering() {
        assertThat(defaults.effectiveOrderByKey()).isFalse();
        assertThat(defaults.withChanges(Map.of("pier.share.ordering", "KEY")).effectiveOrderByKey()).isTrue();
        assertThat(defaults.withChanges(Map.of("pier.share.ordering", "key")).effectiveValue("pier.share.ordering"))
                .isEqualTo("key");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("pier.share.ordering", "partition")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("pier.share.ordering must be none or key, got 'partition'");
    }

    @Test
    void shouldValidateTheReleaseBackoff() {
        GroupConfig config = defaults.withChanges(Map.of("pier.share.release.backoff.initial.ms", "500",
                "pier.share.release.backoff.multiplier", "1.5", "pier.share.release.backoff.max.ms", "4000",
                "pier.share.release.backoff.lock.expiry.enable", "TRUE"));
        assertThat(config.effectiveReleaseBackoffInitialMs()).isEqualTo(500);
        assertThat(config.effectiveReleaseBackoffMultiplier()).isEqualTo(1.5);
        assertThat(config.effectiveReleaseBackoffMaxMs()).isEqualTo(4000);
        assertThat(config.effectiveReleaseBackoffLockExpiry()).isTrue();

        assertThatThrownBy(() -> defaults.withChanges(Map.of("pier.share.release.backoff.multiplier", "0.5")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("pier.share.release.backoff.multiplier must be between 1.0 and 10.0, got 0.5");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("pier.share.release.backoff.multiplier", "NaN")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("must be a number");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("pier.share.release.backoff.initial.ms", "-1")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("pier.share.release.backoff.initial.ms must be greater than or equal to 0");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("pier.share.release.backoff.max.ms", "0")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("pier.share.release.backoff.max.ms must be greater than or equal to 1");
    }

    @Test
    void shouldClampRestoredOverridesIntoCurrentBounds() {
        GroupConfig restored = GroupConfig.restore(ShareGroupBrokerConfig.DEFAULTS, ConsumerGroupBrokerConfig.DEFAULTS, Map.of(
                "share.record.lock.duration.ms", "1000",
                "share.session.timeout.ms", "not a number",
                "share.retired.setting", "1"));

        assertThat(restored.effectiveRecordLockDurationMs()).isEqualTo(15_000);
        assertThat(restored.overrides()).containsOnlyKeys("share.record.lock.duration.ms");
    }

    @Test
    void shouldHaveNoDeadLetterTopicByDefault() {
        assertThat(defaults.effectiveDeadLetterTopic()).isNull();
        assertThat(defaults.effectiveDeadLetterCopyRecord()).isFalse();
        assertThat(defaults.effectiveValue("errors.deadletterqueue.topic.name")).isEmpty();
        assertThat(defaults.effectiveValue("errors.deadletterqueue.copy.record.enable")).isEqualTo("false");
    }

    @Test
    void shouldSetAndDeleteTheDeadLetterConfigs() {
        GroupConfig config = defaults.withChanges("g1", Map.of(
                "errors.deadletterqueue.topic.name", " dlq.orders ",
                "errors.deadletterqueue.copy.record.enable", "TRUE"));

        assertThat(config.effectiveDeadLetterTopic()).isEqualTo("dlq.orders");
        assertThat(config.effectiveDeadLetterCopyRecord()).isTrue();
        assertThat(config.overrides()).containsEntry("errors.deadletterqueue.topic.name", "dlq.orders")
                .containsEntry("errors.deadletterqueue.copy.record.enable", "true");
        assertThat(config.entries()).contains(
                new GroupConfigEntry("errors.deadletterqueue.topic.name", "dlq.orders", false),
                new GroupConfigEntry("errors.deadletterqueue.copy.record.enable", "true", false));

        // Empty means no topic, as in Kafka; deleting goes back to the default (none).
        GroupConfig blank = config.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", ""));
        assertThat(blank.effectiveDeadLetterTopic()).isNull();
        Map<String, String> delete = new HashMap<>();
        delete.put("errors.deadletterqueue.topic.name", null);
        delete.put("errors.deadletterqueue.copy.record.enable", null);
        GroupConfig deleted = config.withChanges("g1", delete);
        assertThat(deleted.effectiveDeadLetterTopic()).isNull();
        assertThat(deleted.effectiveDeadLetterCopyRecord()).isFalse();
        assertThat(deleted.overrides()).isEmpty();
    }

    @Test
    void shouldRefuseADeadLetterTopicNameStartingWithTwoUnderscoresWithKafkasMessage() {
        assertThatThrownBy(() -> defaults.withChanges("g1",
                Map.of("errors.deadletterqueue.topic.name", "__consumer_offsets")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'");
        // Also with an empty prefix, and before the prefix rule.
        GroupConfig noPrefix = GroupConfig.defaults(ShareGroupBrokerConfig.fromProperties(
                Map.of("errors.deadletterqueue.topic.name.prefix", "")));
        assertThatThrownBy(() -> noPrefix.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", "__x")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'");
    }

    @Test
    void shouldRefuseADeadLetterTopicNameWithoutTheBrokerPrefix() {
        assertThatThrownBy(() -> defaults.withChanges("g1",
                Map.of("errors.deadletterqueue.topic.name", "orders.dead")))
                .isInstanceOf(InvalidConfigurationException.class)
                // Kafka's message ends in a full stop after the prefix, hence "dlq..".
                .hasMessage("Configured DLQ topic name does not comply with the DLQ topic prefix in share group: g1,"
                        + " topic: orders.dead, prefix: dlq..");
        assertThatThrownBy(() -> defaults.withChanges(Map.of("errors.deadletterqueue.topic.name", "dlq")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("Configured DLQ topic name does not comply with the DLQ topic prefix,"
                        + " topic: dlq, prefix: dlq..");

        GroupConfig custom = GroupConfig.defaults(ShareGroupBrokerConfig.fromProperties(
                Map.of("errors.deadletterqueue.topic.name.prefix", "dead-")));
        assertThat(custom.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", "dead-orders"))
                .effectiveDeadLetterTopic()).isEqualTo("dead-orders");
        assertThatThrownBy(() -> custom.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", "dlq.orders")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("prefix: dead-");

        // An empty prefix lifts the rule.
        GroupConfig noPrefix = GroupConfig.defaults(ShareGroupBrokerConfig.fromProperties(
                Map.of("errors.deadletterqueue.topic.name.prefix", "")));
        assertThat(noPrefix.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", "orders-dead"))
                .effectiveDeadLetterTopic()).isEqualTo("orders-dead");
    }

    @Test
    void shouldRefuseAnIllegalDeadLetterTopicName() {
        assertInvalid("errors.deadletterqueue.topic.name", "dlq.a b",
                "errors.deadletterqueue.topic.name: Topic name is invalid: 'dlq.a b' contains one or more characters"
                        + " other than ASCII alphanumerics, '.', '_' and '-'");
        assertInvalid("errors.deadletterqueue.topic.name", "dlq." + "x".repeat(246),
                "errors.deadletterqueue.topic.name: Topic name is invalid: the length of 'dlq.xxx");
        assertThat(defaults.withChanges(Map.of("errors.deadletterqueue.topic.name", "dlq." + "x".repeat(245)))
                .effectiveDeadLetterTopic()).hasSize(249);
        assertInvalid("errors.deadletterqueue.copy.record.enable", "yes",
                "errors.deadletterqueue.copy.record.enable must be true or false");
    }

    @Test
    void shouldMapDeadLetterRefusalsToInvalidConfig() {
        try {
            defaults.withChanges("g1", Map.of("errors.deadletterqueue.topic.name", "__x"));
        } catch (InvalidConfigurationException e) {
            assertThat(Errors.forException(e)).isEqualTo(Errors.INVALID_CONFIG);
            return;
        }
        throw new AssertionError("expected InvalidConfigurationException");
    }

    @Test
    void shouldRestoreStoredDeadLetterConfigsWithoutCheckingThemAgain() {
        // Stored under an earlier prefix: kept as stored, for the writer to judge.
        GroupConfig restored = GroupConfig.restore(ShareGroupBrokerConfig.DEFAULTS, ConsumerGroupBrokerConfig.DEFAULTS,
                Map.of("errors.deadletterqueue.topic.name", "old.orders",
                        "errors.deadletterqueue.copy.record.enable", "true"));

        assertThat(restored.effectiveDeadLetterTopic()).isEqualTo("old.orders");
        assertThat(restored.effectiveDeadLetterCopyRecord()).isTrue();
        assertThat(restored.overrides()).containsOnlyKeys("errors.deadletterqueue.topic.name",
                "errors.deadletterqueue.copy.record.enable");

        GroupConfig bad = GroupConfig.restore(ShareGroupBrokerConfig.DEFAULTS, ConsumerGroupBrokerConfig.DEFAULTS,
                Map.of("errors.deadletterqueue.copy.record.enable", "maybe"));
        assertThat(bad.overrides()).isEmpty();
    }

    private void assertInvalid(String name, String value, String message) {
        assertThatThrownBy(() -> defaults.withChanges(Map.of(name, value)))
                .as("%s=%s", name, value)
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining(message);
    }
}
