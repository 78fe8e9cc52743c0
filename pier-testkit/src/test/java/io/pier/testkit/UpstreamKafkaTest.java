package io.pier.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** UpstreamKafka's refusals, before any broker starts (GatewayOnKafka39IT runs Kafka 3.9.1 itself). */
class UpstreamKafkaTest {
    @Test
    void shouldRefuseAReleaseThatCannotBeFormattedStandalone() {
        assertThatThrownBy(() -> UpstreamKafka.builder().version("3.8.1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Kafka 3.8.1: a single KRaft node is formatted with --standalone, which needs Kafka 3.9 or later");
        assertThatThrownBy(() -> UpstreamKafka.builder().version("latest")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not a Kafka release: latest");
    }

    @Test
    void shouldRefuseShareGroupsOnKafka3() {
        assertThatThrownBy(() -> UpstreamKafka.builder().version("3.9.1").shareGroups(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Kafka 3.9.1 has no share groups");
    }

    @Test
    void shouldNameTheMissingJarsOfARelease() {
        // 3.9.0 is a release no build step copies
        UpstreamKafka upstream = UpstreamKafka.builder().version("3.9.0").build();
        assertThatThrownBy(upstream::start).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("no Apache Kafka 3.9.0 broker at ")
                .hasMessageContaining("kafka_2.13-3.9.0.jar: pier-testkit's build copies it there");
    }
}
