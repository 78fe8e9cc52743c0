package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;

class ListenerConfigTest {
    @Test
    void shouldServeOnePlaintextListenerByDefault() {
        List<ListenerSpec> listeners = new BrokerConfig(Map.of()).listeners();

        assertThat(listeners).containsExactly(
                new ListenerSpec("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092));
    }

    @Test
    void shouldParseSeveralListenersWithTheirProtocolsAndAdvertisedAddresses() {
        BrokerConfig config = new BrokerConfig(Map.of(
                "listeners", "PLAINTEXT://:9092, SSL://0.0.0.0:9093,internal://127.0.0.1:9095",
                "advertised.listeners", "SSL://broker.example:19093,PLAINTEXT://:9092",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,INTERNAL:SSL"));

        assertThat(config.listeners()).containsExactly(
                new ListenerSpec("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092),
                new ListenerSpec("SSL", SecurityProtocol.SSL, "0.0.0.0", 9093, "broker.example", 19093),
                new ListenerSpec("INTERNAL", SecurityProtocol.SSL, "127.0.0.1", 9095, "127.0.0.1", 9095));
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.port()).isEqualTo(9092);
    }

    @Test
    void shouldSkipControllerListenersOfAKafkaServerProperties() {
        BrokerConfig config = new BrokerConfig(Map.of(
                "process.roles", "broker,controller",
                "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "controller.listener.names", "CONTROLLER",
                "inter.broker.listener.name", "PLAINTEXT",
                "listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL"));

        assertThat(config.listeners()).extracting(ListenerSpec::name).containsExactly("PLAINTEXT");
    }

    @Test
    void shouldRefuseAnUnknownProtocol() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "CLIENT://:9092",
                "listener.security.protocol.map", "CLIENT:TLS")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.security.protocol.map").hasMessageContaining("TLS")
                .hasMessageContaining("CLIENT");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "HTTPS://:9092")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("HTTPS")
                .hasMessageContaining("listener.security.protocol.map");
    }

    @Test
    void shouldRefuseAnUnmappedListenerName() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092,CLIENT://:9093",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("listeners")
                .hasMessageContaining("CLIENT");
    }

    @Test
    void shouldAcceptSaslListeners() {
        BrokerConfig config = new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092,EXT://:9095",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXT:SASL_PLAINTEXT"));

        assertThat(config.listeners()).extracting(ListenerSpec::protocol)
                .containsExactly(SecurityProtocol.PLAINTEXT, SecurityProtocol.SASL_PLAINTEXT);
    }

    @Test
    void shouldRefuseBadListenerEntries() {
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092,PLAINTEXT://:9093")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("twice");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "127.0.0.1:9092")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("listeners");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "PLAINTEXT://:99999")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("listeners");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092",
                "advertised.listeners", "SSL://:9093")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("advertised.listeners")
                .hasMessageContaining("SSL");
        assertThatThrownBy(() -> new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092",
                "inter.broker.listener.name", "REPLICATION")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("inter.broker.listener.name");
    }
}
