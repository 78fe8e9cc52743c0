package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a gateway's settings may ask for: SASL listeners (GatewaySaslIT) and an authorizer (GatewayAclIT), as a broker's. */
class GatewayConfigTest {
    private static final String UPSTREAM = "pier.gateway.upstream.bootstrap.servers";

    @Test
    void shouldTakePlaintextAndTlsListeners() {
        BrokerConfig config = new BrokerConfig(Map.of(UPSTREAM, "127.0.0.1:9092",
                "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"));

        assertThat(config.gateway()).isTrue();
        assertThat(config.listeners()).hasSize(2);
    }

    @Test
    void shouldTakeSaslListeners() {
        BrokerConfig config = new BrokerConfig(Map.of(UPSTREAM, "127.0.0.1:9092",
                "listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"));

        assertThat(config.listeners()).hasSize(3);
    }

    @Test
    void shouldTakeAnAuthorizerOnAGatewayAsOnABroker() {
        BrokerConfig config = new BrokerConfig(Map.of(UPSTREAM, "127.0.0.1:9092",
                "listeners", "SASL_PLAINTEXT://127.0.0.1:0",
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"));

        assertThat(config.gateway()).isTrue();
    }

    @Test
    void shouldLetABrokerOfItsOwnHaveBoth() {
        BrokerConfig config = new BrokerConfig(Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0",
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"));

        assertThat(config.gateway()).isFalse();
    }
}
