package io.pier.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.junit.jupiter.api.Test;

class LogConfigTest {
    @Test
    void shouldUseKafkaDefaults() {
        LogConfig d = LogConfig.defaults();
        assertThat(d).isEqualTo(new LogConfig(1073741824L, 604800000L, 604800000L, -1L, 1048588, 4096, false,
                Durability.DURABLE));
        assertThat(LogConfig.fromBrokerProperties(Map.of("unrelated.setting", "x"))).isEqualTo(d);
    }

    @Test
    void shouldReadBrokerPropertiesWithFinestUnitWinning() {
        Map<String, String> p = new HashMap<>();
        p.put("log.segment.bytes", "1048576");
        p.put("log.roll.hours", "2");
        p.put("log.retention.hours", "1");
        p.put("log.retention.minutes", "3");
        p.put("log.retention.bytes", "1000000");
        p.put("message.max.bytes", "2000");
        p.put("log.index.interval.bytes", "100");
        p.put("log.message.timestamp.type", "LogAppendTime");
        p.put("pier.log.durability", "none");

        LogConfig c = LogConfig.fromBrokerProperties(p);

        assertThat(c).isEqualTo(new LogConfig(1048576, 7_200_000, 180_000, 1000000, 2000, 100, true, Durability.NONE));
        p.put("log.roll.ms", "5");
        p.put("log.retention.ms", "-1");
        assertThat(LogConfig.fromBrokerProperties(p).segmentMs()).isEqualTo(5);
        assertThat(LogConfig.fromBrokerProperties(p).retentionMs()).isEqualTo(-1);
    }

    @Test
    void shouldNameBadBrokerSetting() {
        assertThatThrownBy(() -> LogConfig.fromBrokerProperties(Map.of("log.segment.bytes", "lots")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.segment.bytes");
        assertThatThrownBy(() -> LogConfig.fromBrokerProperties(Map.of("pier.log.durability", "maybe")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.log.durability");
        assertThatThrownBy(() -> LogConfig.fromBrokerProperties(Map.of("log.retention.ms", "-7")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.retention.ms");
    }

    @Test
    void shouldApplyTopicOverrides() {
        LogConfig broker = LogConfig.defaults();
        LogConfig c = LogConfig.withTopicOverrides(broker, Map.of("segment.bytes", "4096", "retention.ms", "-1",
                "message.timestamp.type", "LogAppendTime", "cleanup.policy", "delete"));

        assertThat(c.segmentBytes()).isEqualTo(4096);
        assertThat(c.retentionMs()).isEqualTo(-1);
        assertThat(c.logAppendTime()).isTrue();
        assertThat(c.maxMessageBytes()).isEqualTo(broker.maxMessageBytes());
        assertThat(c.asTopicConfigs()).containsEntry("segment.bytes", "4096")
                .containsEntry("retention.ms", "-1")
                .containsEntry("message.timestamp.type", "LogAppendTime")
                .containsEntry("cleanup.policy", "delete")
                .containsEntry("max.message.bytes", "1048588");
        assertThat(c.asTopicConfigs().keySet()).isEqualTo(LogConfig.topicConfigNames());
    }

    @Test
    void shouldTakeEveryCleanupPolicyKafkaAccepts() {
        LogConfig broker = LogConfig.defaults();
        assertThat(broker.cleanupPolicy()).isEqualTo(CleanupPolicy.DELETE);
        LogConfig compact = LogConfig.withTopicOverrides(broker, Map.of("cleanup.policy", "compact"));
        assertThat(compact.cleanupPolicy()).isEqualTo(new CleanupPolicy(false, true));
        assertThat(compact.asTopicConfigs()).containsEntry("cleanup.policy", "compact");
        LogConfig both = LogConfig.withTopicOverrides(broker, Map.of("cleanup.policy", " Delete , compact"));
        assertThat(both.cleanupPolicy()).isEqualTo(new CleanupPolicy(true, true));
        assertThat(both.asTopicConfigs()).containsEntry("cleanup.policy", "compact,delete");
        assertThat(LogConfig.fromBrokerProperties(Map.of("log.cleanup.policy", "compact")).cleanupPolicy().compact())
                .isTrue();
        assertThatThrownBy(() -> LogConfig.fromBrokerProperties(Map.of("log.cleanup.policy", "compact,")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.cleanup.policy");
    }

    @Test
    void shouldTakeTheDeadLetterGroupEnableTopicConfig() {
        LogConfig broker = LogConfig.defaults();
        assertThat(broker.deadLetterGroupEnable()).isFalse();
        assertThat(broker.asTopicConfigs()).containsEntry("errors.deadletterqueue.group.enable", "false");
        assertThat(LogConfig.topicConfigNames()).contains("errors.deadletterqueue.group.enable");

        LogConfig enabled = LogConfig.withTopicOverrides(broker, Map.of("errors.deadletterqueue.group.enable", " True"));
        assertThat(enabled.deadLetterGroupEnable()).isTrue();
        assertThat(enabled.asTopicConfigs()).containsEntry("errors.deadletterqueue.group.enable", "true");
        // Nothing else about the log changes.
        assertThat(new LogConfig(enabled.segmentBytes(), enabled.segmentMs(), enabled.retentionMs(),
                enabled.retentionBytes(), enabled.maxMessageBytes(), enabled.indexIntervalBytes(),
                enabled.logAppendTime(), enabled.durability(), enabled.cleanupPolicy(), enabled.preallocateBytes(),
                enabled.timestampBeforeMaxMs(), enabled.timestampAfterMaxMs())).isEqualTo(broker);
        assertThat(LogConfig.withTopicOverrides(broker, Map.of("errors.deadletterqueue.group.enable", "false"))
                .deadLetterGroupEnable()).isFalse();

        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("errors.deadletterqueue.group.enable", "1")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("invalid value 1 for topic config errors.deadletterqueue.group.enable:"
                        + " Expected value to be either true or false");
    }

    @Test
    void shouldRejectUnknownOrBadTopicConfig() {
        LogConfig broker = LogConfig.defaults();
        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("compression.typo", "gzip")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("compression.typo");
        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("cleanup.policy", "compress")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("cleanup.policy");
        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("segment.bytes", "5")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("segment.bytes");
        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("max.message.bytes", "1e3")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("max.message.bytes");
    }
}
