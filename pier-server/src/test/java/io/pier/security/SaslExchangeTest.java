package io.pier.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ClientFinalMessage;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ClientFirstMessage;
import org.apache.kafka.common.security.scram.internals.ScramMessages.ServerFirstMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** PLAIN and SCRAM exchanges: success, and every kind of failure looking the same. */
class SaslExchangeTest {
    private static final String FAILED = "Authentication failed during authentication due to invalid credentials";

    @TempDir
    Path dir;

    private SaslAuthenticators authenticators(ScramCredentialStore store) {
        return new SaslAuthenticators(List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
                Map.of("alice", "alice-secret"), store, 0, 524288);
    }

    private static byte[] plain(String authzid, String user, String password) {
        return (authzid + "\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void shouldAuthenticateWithPlain() throws Exception {
        SaslExchange e = authenticators(ScramCredentialStore.open(null)).start("PLAIN");

        assertThat(e.evaluate(plain("", "alice", "alice-secret"))).isEmpty();
        assertThat(e.isComplete()).isTrue();
        assertThat(e.authorizationId()).isEqualTo("alice");
        SaslExchange same = authenticators(ScramCredentialStore.open(null)).start("PLAIN");
        same.evaluate(plain("alice", "alice", "alice-secret"));
        assertThat(same.authorizationId()).isEqualTo("alice");
    }

    @Test
    void shouldFailPlainAlikeForWrongPasswordUnknownUserOtherAuthzidAndMalformedMessages() throws Exception {
        SaslAuthenticators a = authenticators(ScramCredentialStore.open(null));
        List<byte[]> bad = List.of(plain("", "alice", "wrong"), plain("", "mallory", "alice-secret"),
                plain("admin", "alice", "alice-secret"), "alice\0alice-secret".getBytes(StandardCharsets.UTF_8),
                plain("", "alice", "alice-secret\0x"), new byte[0], plain("", "", ""));
        for (byte[] token : bad) {
            SaslExchange e = a.start("PLAIN");
            assertThatThrownBy(() -> e.evaluate(token)).isInstanceOf(SaslAuthenticationException.class)
                    .hasMessage(FAILED + " with SASL mechanism PLAIN");
            assertThat(e.isComplete()).isFalse();
        }
    }

    @Test
    void shouldStartOnlyEnabledMechanisms() throws Exception {
        SaslAuthenticators a = new SaslAuthenticators(List.of("SCRAM-SHA-512"), Map.of(),
                ScramCredentialStore.open(null), 100, 524288);

        assertThat(a.start("PLAIN")).isNull();
        assertThat(a.start("GSSAPI")).isNull();
        assertThat(a.start(null)).isNull();
        assertThat(a.start("SCRAM-SHA-512")).isNotNull();
    }

    /** A client side of SCRAM, from kafka-clients' formatter, that can tamper with the final message. */
    private static final class Client {
        final ScramFormatter formatter;
        final ClientFirstMessage first;
        ServerFirstMessage serverFirst;

        Client(ScramMechanism mechanism, String user) throws Exception {
            this.formatter = new ScramFormatter(mechanism);
            this.first = new ClientFirstMessage(ScramFormatter.saslName(user), formatter.secureRandomString(), Map.of());
        }

        byte[] finalMessage(byte[] serverFirstBytes, String password, String nonceOverride) throws Exception {
            serverFirst = new ServerFirstMessage(serverFirstBytes);
            String nonce = nonceOverride != null ? nonceOverride : serverFirst.nonce();
            ClientFinalMessage fin = new ClientFinalMessage("n,,".getBytes(StandardCharsets.UTF_8), nonce);
            byte[] salted = formatter.saltedPassword(password, serverFirst.salt(), serverFirst.iterations());
            fin.proof(formatter.clientProof(salted, first, serverFirst, fin));
            return fin.toBytes();
        }
    }

    @ParameterizedTest
    @EnumSource(ScramMechanism.class)
    void shouldAuthenticateWithScram(ScramMechanism mechanism) throws Exception {
        ScramCredentialStore store = ScramCredentialStore.open(dir.resolve("meta/scram-credentials"));
        store.put("bob", mechanism, ScramCredentialStore.credential(mechanism, "bob-secret", 4096));
        SaslExchange e = authenticators(store).start(mechanism.mechanismName());
        Client c = new Client(mechanism, "bob");

        byte[] serverFirst = e.evaluate(c.first.toBytes());
        byte[] serverFinal = e.evaluate(c.finalMessage(serverFirst, "bob-secret", null));

        assertThat(e.isComplete()).isTrue();
        assertThat(e.authorizationId()).isEqualTo("bob");
        assertThat(new String(serverFinal, StandardCharsets.UTF_8)).startsWith("v=");
    }

    @ParameterizedTest
    @EnumSource(ScramMechanism.class)
    void shouldFailScramAlikeForWrongPasswordWrongNonceAndUnknownUser(ScramMechanism mechanism) throws Exception {
        ScramCredentialStore store = ScramCredentialStore.open(null);
        store.put("bob", mechanism, ScramCredentialStore.credential(mechanism, "bob-secret", 4096));
        SaslAuthenticators a = authenticators(store);
        String expected = FAILED + " with SASL mechanism " + mechanism.mechanismName();

        // Wrong password.
        SaslExchange wrongPassword = a.start(mechanism.mechanismName());
        Client c1 = new Client(mechanism, "bob");
        byte[] sf1 = wrongPassword.evaluate(c1.first.toBytes());
        assertThatThrownBy(() -> wrongPassword.evaluate(c1.finalMessage(sf1, "wrong", null)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(expected);

        // Right password, but the client-final nonce is not the one of this exchange (CVE-2024-56128).
        SaslExchange wrongNonce = a.start(mechanism.mechanismName());
        Client c2 = new Client(mechanism, "bob");
        byte[] sf2 = wrongNonce.evaluate(c2.first.toBytes());
        String otherNonce = c2.first.nonce() + "0123456789abcdef";
        assertThatThrownBy(() -> wrongNonce.evaluate(c2.finalMessage(sf2, "bob-secret", otherNonce)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(expected);
        assertThat(wrongNonce.isComplete()).isFalse();

        // Unknown user: the first message succeeds like for a known one; the proof fails.
        SaslExchange unknown = a.start(mechanism.mechanismName());
        Client c3 = new Client(mechanism, "mallory");
        byte[] sf3 = unknown.evaluate(c3.first.toBytes());
        assertThatThrownBy(() -> unknown.evaluate(c3.finalMessage(sf3, "bob-secret", null)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(expected);

        // The unknown user's salt is the same on every attempt, as a real user's: no tell there either.
        SaslExchange again = a.start(mechanism.mechanismName());
        byte[] sf4 = again.evaluate(new Client(mechanism, "mallory").first.toBytes());
        assertThat(new ServerFirstMessage(sf4).salt()).isEqualTo(new ServerFirstMessage(sf3).salt());

        // Garbage.
        SaslExchange garbage = a.start(mechanism.mechanismName());
        assertThatThrownBy(() -> garbage.evaluate("not scram".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(expected);
    }

    @Test
    void shouldRefuseAuthorizationIdOtherThanTheScramUser() throws Exception {
        ScramMechanism m = ScramMechanism.SCRAM_SHA_256;
        ScramCredentialStore store = ScramCredentialStore.open(null);
        store.put("bob", m, ScramCredentialStore.credential(m, "bob-secret", 4096));
        SaslExchange e = authenticators(store).start(m.mechanismName());
        byte[] first = ("n,a=admin,n=bob,r=" + new ScramFormatter(m).secureRandomString()).getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> e.evaluate(first)).isInstanceOf(SaslAuthenticationException.class)
                .hasMessageStartingWith(FAILED);
    }

    @Test
    void shouldKeepCredentialsAcrossReopenWithoutThePassword() throws Exception {
        Path file = dir.resolve("meta/scram-credentials");
        ScramCredentialStore store = ScramCredentialStore.open(file);
        store.put("bob", ScramMechanism.SCRAM_SHA_512,
                ScramCredentialStore.credential(ScramMechanism.SCRAM_SHA_512, "bob-secret", 8192));
        store.putIfAbsent("bob", ScramMechanism.SCRAM_SHA_512, "other", 4096); // kept: bob has one
        store.putIfAbsent("carol", ScramMechanism.SCRAM_SHA_256, "carol-secret", 4096);

        ScramCredentialStore reopened = ScramCredentialStore.open(file);

        assertThat(Files.readString(file)).doesNotContain("bob-secret").doesNotContain("carol-secret");
        assertThat(reopened.userNames()).containsExactly("bob", "carol");
        assertThat(reopened.describe("bob")).containsExactly(Map.entry(ScramMechanism.SCRAM_SHA_512, 8192));
        assertThat(reopened.get("bob", ScramMechanism.SCRAM_SHA_512).storedKey())
                .isEqualTo(store.get("bob", ScramMechanism.SCRAM_SHA_512).storedKey());
        assertThat(reopened.remove("carol", ScramMechanism.SCRAM_SHA_256)).isTrue();
        assertThat(reopened.remove("carol", ScramMechanism.SCRAM_SHA_256)).isFalse();
        assertThat(ScramCredentialStore.open(file).userNames()).containsExactly("bob");
    }

    @Test
    void shouldParseOnlyKafkasPlainAndScramLoginModules() {
        JaasModule m = JaasModule.parse("org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=alice-secret;");
        assertThat(m.className()).isEqualTo(JaasModule.PLAIN);
        assertThat(m.options()).containsEntry("user_alice", "alice-secret").containsEntry("user_admin", "admin-secret");
        assertThatThrownBy(() -> JaasModule.parse("com.sun.security.auth.module.JndiLoginModule required "
                + "user.provider.url=\"ldap://evil\";")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not allowed");
        assertThatThrownBy(() -> JaasModule.parse(JaasModule.SCRAM + " required; " + JaasModule.PLAIN + " required;"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one");
        assertThatThrownBy(() -> JaasModule.parse(JaasModule.PLAIN + " required user_a=\"x;"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JaasModule.parse(JaasModule.PLAIN + " user_a=x;"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
