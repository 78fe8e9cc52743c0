package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class TlsPrincipalMappingTest {
    @Test
    void shouldMapSubjectsWithTheListenersRulesOrKeepTheWholeName() throws Exception {
        Map<String, String> props = Map.of(
                "ssl.principal.mapping.rules", "RULE:^CN=([a-z]+),O=Pier$/$1/L,DEFAULT",
                "listener.name.internal.ssl.principal.mapping.rules", "RULE:^CN=(.*?),.*$/$1/U");
        assertThat(TlsSettings.principalMapper(props, "SSL").getName("CN=alice,O=Pier")).isEqualTo("alice");
        assertThat(TlsSettings.principalMapper(props, "SSL").getName("CN=Bob,O=Other")).isEqualTo("CN=Bob,O=Other");
        assertThat(TlsSettings.principalMapper(props, "INTERNAL").getName("CN=bob,O=Pier")).isEqualTo("BOB");
        assertThat(TlsSettings.principalMapper(Map.of(), "SSL").getName("CN=x")).isEqualTo("CN=x");
    }

    @Test
    void shouldRefuseUnparsableRulesNamingTheSetting() {
        assertThatThrownBy(() -> TlsSettings.principalMapper(Map.of("ssl.principal.mapping.rules", "RULE:broken"),
                "SSL")).isInstanceOf(ConfigException.class).hasMessageContaining("ssl.principal.mapping.rules");
    }
}
