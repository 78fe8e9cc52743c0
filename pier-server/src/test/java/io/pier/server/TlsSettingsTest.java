package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsSettingsTest {
    @TempDir
    Path dir;

    @Test
    void shouldNameTheMissingKeyStoreFile() {
        String missing = dir.resolve("nope.p12").toString();
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of("ssl.keystore.location", missing,
                "ssl.keystore.password", "x", "ssl.keystore.type", "PKCS12"), "SSL"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.location")
                .hasMessageContaining("no such file");
    }

    @Test
    void shouldNameTheListenerPrefixedSettingThatWasUsed() {
        String missing = dir.resolve("nope.jks").toString();
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of("ssl.keystore.location", "/elsewhere",
                "listener.name.clients.ssl.keystore.location", missing), "CLIENTS"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.name.clients.ssl.keystore.location");
    }

    @Test
    void shouldRefuseAWrongKeyStorePasswordWithoutShowingIt() throws Exception {
        Path store = dir.resolve("ks.p12");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (OutputStream out = Files.newOutputStream(store)) {
            ks.store(out, "right-password".toCharArray());
        }
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of("ssl.keystore.location", store.toString(),
                "ssl.keystore.password", "wrong-password", "ssl.keystore.type", "PKCS12"), "SSL"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.password")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("wrong-password"));
    }

    @Test
    void shouldRequireAKeyStoreAndValidClientAuth() {
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of(), "SSL"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.location");
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of("ssl.keystore.type", "PEM"), "SSL"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.certificate.chain");
        assertThatThrownBy(() -> TlsSettings.serverContext(Map.of("ssl.keystore.type", "BKS",
                "ssl.keystore.location", dir.toString()), "SSL"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ssl.keystore.type");
    }
}
