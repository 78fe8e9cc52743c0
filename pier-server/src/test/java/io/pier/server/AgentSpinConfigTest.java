package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class AgentSpinConfigTest {
    @Test
    void shouldNotSpinByDefault() {
        assertThat(new BrokerConfig(Map.of()).agentSpinUs()).isZero();
    }

    @Test
    void shouldTakeASpin() {
        assertThat(new BrokerConfig(Map.of("pier.agent.spin.us", "50")).agentSpinUs()).isEqualTo(50);
    }

    @Test
    void shouldNameTheSettingOfABadValue() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("pier.agent.spin.us", "-1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.agent.spin.us");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("pier.agent.spin.us", "10001")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pier.agent.spin.us");
    }
}
