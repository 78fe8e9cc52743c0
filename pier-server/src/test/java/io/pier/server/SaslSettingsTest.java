package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.security.SaslAuthenticators;
import io.pier.security.ScramCredentialStore;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.junit.jupiter.api.Test;

class SaslSettingsTest {
    private static final String PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";";

    private static SaslAuthenticators parse(Map<String, String> props) throws Exception {
        return SaslSettings.forListener(props, "SASL_PLAINTEXT", ScramCredentialStore.open(null));
    }

    @Test
    void shouldEnablePlainByDefaultWithTheListenersUsers() throws Exception {
        SaslAuthenticators a = parse(Map.of("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS));

        assertThat(a.enabledMechanisms()).containsExactly("PLAIN");
        assertThat(a.failureDelayMs()).isEqualTo(100);
        assertThat(a.maxReceiveBytes()).isEqualTo(524288);
        assertThat(a.reauthMs()).isZero();
        assertThat(a.start("PLAIN").evaluate("\0alice\0alice-secret".getBytes())).isEmpty();
    }

    @Test
    void shouldReadMechanismsDelayAndListenerPrefixedSettings() throws Exception {
        Map<String, String> props = new HashMap<>();
        props.put("sasl.enabled.mechanisms", "PLAIN");
        props.put("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "scram-sha-256, SCRAM-SHA-512");
        props.put("connection.failed.authentication.delay.ms", "250");
        props.put("listener.name.sasl_plaintext.connections.max.reauth.ms", "60000");

        SaslAuthenticators a = parse(props);
        assertThat(a.reauthMs()).isEqualTo(60000);

        assertThat(a.enabledMechanisms()).containsExactly("SCRAM-SHA-256", "SCRAM-SHA-512");
        assertThat(a.failureDelayMs()).isEqualTo(250);
    }

    @Test
    void shouldRefuseUnsupportedMechanismsNamingTheSetting() {
        for (String m : new String[] {"GSSAPI", "PLAIN,OAUTHBEARER", "FOO", " "}) {
            assertThatThrownBy(() -> parse(Map.of("sasl.enabled.mechanisms", m,
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS)))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("sasl.enabled.mechanisms");
        }
    }

    @Test
    void shouldRequireKafkasLoginModulesAndNeverEchoTheJaasValue() {
        assertThatThrownBy(() -> parse(Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.name.sasl_plaintext.plain.sasl.jaas.config");
        assertThatThrownBy(() -> parse(Map.of("listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "com.sun.security.auth.module.JndiLoginModule required password=\"s3cret\";")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("not allowed")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> parse(Map.of("sasl.enabled.mechanisms", "SCRAM-SHA-256",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", PLAIN_JAAS)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ScramLoginModule");
        assertThatThrownBy(() -> parse(Map.of("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS,
                "connection.failed.authentication.delay.ms", "-1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("connection.failed.authentication.delay.ms");
    }

    @Test
    void shouldParseTheScramBootstrapLikeKafkaStorageAddScram() throws Exception {
        var entries = ScramBootstrap.parse("SCRAM-SHA-256=[name=admin,password=admin-secret],"
                + " SCRAM-SHA-512=[name=bob,password=\"a,b]c\",iterations=8192]");

        assertThat(entries).containsExactly(
                new ScramBootstrap.Entry(ScramMechanism.SCRAM_SHA_256, "admin", "admin-secret", 4096),
                new ScramBootstrap.Entry(ScramMechanism.SCRAM_SHA_512, "bob", "a,b]c", 8192));
        for (String bad : new String[] {"SCRAM-SHA-1=[name=a,password=b]", "SCRAM-SHA-256=[name=a]",
                "SCRAM-SHA-256=[name=a,password=b", "SCRAM-SHA-256=[name=a,password=b,iterations=10]",
                "SCRAM-SHA-256=[name=a,password=b,salt=x]"}) {
            assertThatThrownBy(() -> ScramBootstrap.parse(bad)).isInstanceOf(ConfigException.class)
                    .hasMessageContaining(ScramBootstrap.SETTING).hasMessageNotContaining("password=b");
        }
    }
}
