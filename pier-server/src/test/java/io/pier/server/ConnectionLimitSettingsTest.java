package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.network.ConnectionLimits;
import io.pier.network.ConnectionLimits.Admission;
import java.net.InetAddress;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class ConnectionLimitSettingsTest {
    private static final String TWO_LISTENERS = "PLAINTEXT://:9092,SSL://:9093";

    @Test
    void shouldHaveNoLimitsByDefault() {
        ConnectionLimitSettings settings = new BrokerConfig(Map.of()).connectionLimits();

        assertThat(settings.maxConnections()).isEqualTo(Integer.MAX_VALUE);
        assertThat(settings.maxConnectionsPerIp()).isEqualTo(Integer.MAX_VALUE);
        assertThat(settings.perIpOverrides()).isEmpty();
        assertThat(settings.perListener()).isEmpty();
        assertThat(settings.exemptListener()).isNull();
    }

    @Test
    void shouldReadKafkasSettings() {
        ConnectionLimitSettings settings = new BrokerConfig(Map.of(
                "listeners", TWO_LISTENERS,
                "max.connections", "100",
                "max.connections.per.ip", "10",
                "max.connections.per.ip.overrides", "hostName:100, 127.0.0.1:200,::1:3",
                "listener.name.ssl.max.connections", "7")).connectionLimits();

        assertThat(settings.maxConnections()).isEqualTo(100);
        assertThat(settings.maxConnectionsPerIp()).isEqualTo(10);
        assertThat(settings.perIpOverrides()).containsExactly(Map.entry("hostName", 100), Map.entry("127.0.0.1", 200),
                Map.entry("::1", 3));
        assertThat(settings.perListener()).containsExactly(Map.entry("SSL", 7));
    }

    @Test
    void shouldResolveOverridesToAddresses() throws Exception {
        ConnectionLimits limits = new BrokerConfig(Map.of(
                "max.connections.per.ip", "0",
                "max.connections.per.ip.overrides", "127.0.0.1:1")).connectionLimits().limits();

        assertThat(limits.tryAcquire("PLAINTEXT", InetAddress.getByName("127.0.0.1"))).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", InetAddress.getByName("127.0.0.1")))
                .isEqualTo(Admission.OVER_PER_IP);
        assertThat(limits.tryAcquire("PLAINTEXT", InetAddress.getByName("10.1.2.3"))).isEqualTo(Admission.OVER_PER_IP);
    }

    @Test
    void shouldExemptTheInterBrokerListenerFromTheBrokerWideLimitOnlyWithSeveralListeners() {
        assertThat(new BrokerConfig(Map.of("listeners", TWO_LISTENERS)).connectionLimits().exemptListener())
                .isEqualTo("PLAINTEXT");
        assertThat(new BrokerConfig(Map.of("listeners", TWO_LISTENERS, "inter.broker.listener.name", "ssl"))
                .connectionLimits().exemptListener()).isEqualTo("SSL");
        assertThat(new BrokerConfig(Map.of("listeners", TWO_LISTENERS, "security.inter.broker.protocol", "SSL"))
                .connectionLimits().exemptListener()).isEqualTo("SSL");
        assertThat(new BrokerConfig(Map.of("listeners", "PLAINTEXT://:9092")).connectionLimits().exemptListener())
                .isNull();
        assertThat(new BrokerConfig(Map.of("listeners", "CLIENTS://:9092,OTHER://:9093",
                "listener.security.protocol.map", "CLIENTS:PLAINTEXT,OTHER:PLAINTEXT"))
                .connectionLimits().exemptListener()).isNull();
    }

    @Test
    void shouldNameTheSettingOfANegativeOrUnreadableLimit() {
        assertRefused(Map.of("max.connections", "-1"), "max.connections");
        assertRefused(Map.of("max.connections.per.ip", "-5"), "max.connections.per.ip");
        assertRefused(Map.of("max.connections.per.ip", "many"), "max.connections.per.ip");
        assertRefused(Map.of("listener.name.plaintext.max.connections", "-1"),
                "listener.name.plaintext.max.connections");
    }

    @Test
    void shouldRefuseAMalformedOverride() {
        assertRefused(Map.of("max.connections.per.ip.overrides", "127.0.0.1"), "max.connections.per.ip.overrides");
        assertRefused(Map.of("max.connections.per.ip.overrides", ":5"), "max.connections.per.ip.overrides");
        assertRefused(Map.of("max.connections.per.ip.overrides", "127.0.0.1:x"), "max.connections.per.ip.overrides");
        assertRefused(Map.of("max.connections.per.ip.overrides", "127.0.0.1:-1"), "max.connections.per.ip.overrides");
        assertRefused(Map.of("max.connections.per.ip.overrides", "bad/host:5"), "max.connections.per.ip.overrides");
    }

    @Test
    void shouldRefuseAPerIpLimitOfZeroWithoutOverrides() {
        assertRefused(Map.of("max.connections.per.ip", "0"), "max.connections.per.ip.overrides");
        assertThat(new BrokerConfig(Map.of("max.connections.per.ip", "0", "max.connections.per.ip.overrides",
                "127.0.0.1:5")).connectionLimits().maxConnectionsPerIp()).isZero();
    }

    @Test
    void shouldRefuseAnOverrideHostThatDoesNotResolve() {
        ConnectionLimitSettings settings = new BrokerConfig(Map.of("max.connections.per.ip.overrides",
                "no-such-host.invalid:5")).connectionLimits();

        assertThatThrownBy(settings::limits).isInstanceOf(ConfigException.class)
                .hasMessageContaining("max.connections.per.ip.overrides").hasMessageContaining("no-such-host.invalid");
    }

    private static void assertRefused(Map<String, String> props, String setting) {
        assertThatThrownBy(() -> new BrokerConfig(props)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(setting);
    }
}
