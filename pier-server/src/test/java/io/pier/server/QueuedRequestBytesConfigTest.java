package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** {@code queued.max.request.bytes}: Kafka's default and Kafka's start-up check against the frame limit. */
class QueuedRequestBytesConfigTest {
    @Test
    void shouldHaveNoBudgetByDefault() {
        assertThat(new BrokerConfig(Map.of()).queuedMaxRequestBytes()).isEqualTo(-1);
    }

    @Test
    void shouldTakeABudgetOfAtLeastTheLargestRequest() {
        assertThat(new BrokerConfig(Map.of("socket.request.max.bytes", "1048576", "queued.max.request.bytes",
                "1048576")).queuedMaxRequestBytes()).isEqualTo(1_048_576);
        assertThat(new BrokerConfig(Map.of("queued.max.request.bytes", "0")).queuedMaxRequestBytes()).isZero();
    }

    @Test
    void shouldRefuseABudgetBelowTheLargestRequestNamingBothSettings() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("queued.max.request.bytes", "1048576")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("queued.max.request.bytes must be larger or equal to socket.request.max.bytes");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("queued.max.request.bytes", "many")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("queued.max.request.bytes");
    }
}
