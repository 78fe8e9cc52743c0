package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class MetricsConfigTest {
    @Test
    void shouldServeOnLoopbackPort9404ByDefault() {
        BrokerConfig config = new BrokerConfig(Map.of());

        assertThat(config.metricsEnabled()).isTrue();
        assertThat(config.metricsHost()).isEqualTo("127.0.0.1");
        assertThat(config.metricsPort()).isEqualTo(9404);
        assertThat(config.metricsSnapshotIntervalMs()).isEqualTo(1000);
    }

    @Test
    void shouldNameTheSettingOfABadValue() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("pier.metrics.port", "70000")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.metrics.port");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("pier.metrics.enable", "yes")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.metrics.enable");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("pier.metrics.snapshot.interval.ms", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.metrics.snapshot.interval.ms");
    }

    @Test
    void shouldTurnOff() {
        assertThat(new BrokerConfig(Map.of("pier.metrics.enable", "false")).metricsEnabled()).isFalse();
    }
}
