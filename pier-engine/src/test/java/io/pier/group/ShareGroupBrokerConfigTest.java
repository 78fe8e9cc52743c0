package io.pier.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class ShareGroupBrokerConfigTest {

    @Test
    void shouldUseKafkaDefaults() {
        ShareGroupBrokerConfig config = ShareGroupBrokerConfig.fromProperties(Map.of());

        assertThat(config.sessionTimeoutMs()).isEqualTo(45_000);
        assertThat(config.minSessionTimeoutMs()).isEqualTo(45_000);
        assertThat(config.maxSessionTimeoutMs()).isEqualTo(60_000);
        assertThat(config.heartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(config.minHeartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(config.maxHeartbeatIntervalMs()).isEqualTo(15_000);
        assertThat(config.recordLockDurationMs()).isEqualTo(30_000);
        assertThat(config.minRecordLockDurationMs()).isEqualTo(15_000);
        assertThat(config.maxRecordLockDurationMs()).isEqualTo(60_000);
        assertThat(config.deliveryCountLimit()).isEqualTo(5);
        assertThat(config.minDeliveryCountLimit()).isEqualTo(2);
        assertThat(config.maxDeliveryCountLimit()).isEqualTo(10);
        assertThat(config.partitionMaxRecordLocks()).isEqualTo(2_000);
        assertThat(config.minPartitionMaxRecordLocks()).isEqualTo(100);
        assertThat(config.maxPartitionMaxRecordLocks()).isEqualTo(4_000);
        assertThat(config.maxSize()).isEqualTo(200);
        assertThat(config.maxShareSessions()).isEqualTo(2_000);
        assertThat(config.deadLetterTopicPrefix()).isEqualTo("dlq.");
        assertThat(config.deadLetterAutoCreateTopics()).isFalse();
        assertThat(ShareGroupBrokerConfig.DEFAULTS).isEqualTo(config);
    }

    @Test
    void shouldReadTheDeadLetterSettings() {
        ShareGroupBrokerConfig config = ShareGroupBrokerConfig.fromProperties(Map.of(
                "errors.deadletterqueue.topic.name.prefix", " dead- ",
                "errors.deadletterqueue.auto.create.topics.enable", "TRUE"));

        assertThat(config.deadLetterTopicPrefix()).isEqualTo("dead-");
        assertThat(config.deadLetterAutoCreateTopics()).isTrue();
        assertThat(ShareGroupBrokerConfig.fromProperties(Map.of("errors.deadletterqueue.topic.name.prefix", ""))
                .deadLetterTopicPrefix()).isEmpty();
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                Map.of("errors.deadletterqueue.auto.create.topics.enable", "yes")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("errors.deadletterqueue.auto.create.topics.enable");
    }

    @Test
    void shouldIgnoreUnknownKeys() {
        ShareGroupBrokerConfig config = ShareGroupBrokerConfig.fromProperties(
                Map.of("listeners", "PLAINTEXT://:9092", "group.share.max.size", "7"));

        assertThat(config.maxSize()).isEqualTo(7);
    }

    @Test
    void shouldAllowTestsToLowerTheMinimums() {
        ShareGroupBrokerConfig config = ShareGroupBrokerConfig.fromProperties(Map.of(
                "group.share.min.record.lock.duration.ms", "1000",
                "group.share.record.lock.duration.ms", "1000",
                "group.share.min.session.timeout.ms", "1000",
                "group.share.session.timeout.ms", "1000",
                "group.share.min.heartbeat.interval.ms", "100",
                "group.share.heartbeat.interval.ms", "100"));

        assertThat(config.recordLockDurationMs()).isEqualTo(1_000);
        assertThat(config.sessionTimeoutMs()).isEqualTo(1_000);
        assertThat(config.heartbeatIntervalMs()).isEqualTo(100);
    }

    @Test
    void shouldRejectUnparsableValueNamingTheSetting() {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.session.timeout.ms", "soon")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.session.timeout.ms");
    }

    @Test
    void shouldRejectValuesOutsideKafkaRanges() {
        assertRejected("group.share.record.lock.duration.ms", "999");
        assertRejected("group.share.min.record.lock.duration.ms", "30001");
        assertRejected("group.share.max.record.lock.duration.ms", "29999");
        assertRejected("group.share.delivery.count.limit", "11");
        assertRejected("group.share.min.delivery.count.limit", "1");
        assertRejected("group.share.max.delivery.count.limit", "26");
        assertRejected("group.share.partition.max.record.locks", "99");
        assertRejected("group.share.min.partition.max.record.locks", "2001");
        assertRejected("group.share.max.partition.max.record.locks", "10001");
        assertRejected("group.share.max.size", "0");
        assertRejected("group.share.max.size", "1001");
        assertRejected("group.share.min.session.timeout.ms", "0");
        assertRejected("group.share.min.heartbeat.interval.ms", "0");
    }

    @Test
    void shouldRejectDefaultOutsideItsBounds() {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.session.timeout.ms", "40000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.session.timeout.ms must be greater than or equal to"
                        + " group.share.min.session.timeout.ms");
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.record.lock.duration.ms", "70000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.record.lock.duration.ms must be less than or equal to");
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.delivery.count.limit", "9",
                                "group.share.max.delivery.count.limit", "8")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.delivery.count.limit");
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.partition.max.record.locks", "150",
                                "group.share.min.partition.max.record.locks", "200")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.partition.max.record.locks");
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(
                        Map.of("group.share.heartbeat.interval.ms", "16000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.heartbeat.interval.ms");
    }

    @Test
    void shouldRejectMinAboveMax() {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(Map.of(
                        "group.share.min.session.timeout.ms", "50000",
                        "group.share.max.session.timeout.ms", "48000",
                        "group.share.session.timeout.ms", "49000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.max.session.timeout.ms must be greater than or equal to"
                        + " group.share.min.session.timeout.ms");
    }

    @Test
    void shouldRejectHeartbeatNotBelowSessionTimeout() {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(Map.of(
                        "group.share.min.session.timeout.ms", "1000",
                        "group.share.session.timeout.ms", "5000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.heartbeat.interval.ms must be less than"
                        + " group.share.session.timeout.ms");
    }

    @Test
    void shouldRejectFewerShareSessionsThanGroupMembers() {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(Map.of(
                        "group.share.max.share.sessions", "100", "group.share.max.size", "200")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.share.max.share.sessions");
    }

    private static void assertRejected(String name, String value) {
        assertThatThrownBy(() -> ShareGroupBrokerConfig.fromProperties(Map.of(name, value)))
                .as("%s=%s", name, value)
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(name);
    }
}
