package io.pier.gateway;

import io.pier.security.ScramCredentialStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SCRAM credentials of a gateway's SASL listeners, the same on every node: kept in a compacted
 * topic on the upstream ({@value #TOPIC}, default {@value #DEFAULT_TOPIC}), one record per user and
 * mechanism (salt, stored key, server key, iterations; never a password), which every node reads
 * into its {@link ScramCredentialStore}. A change made through any node (kafka-configs {@code
 * --entity-type users}, {@code pier.sasl.scram.bootstrap}) is written there and answered once this
 * node has read it back; the others read it a moment later. The topic holds what a broker keeps in
 * {@code meta/scram-credentials}: whoever can read it can mount a dictionary attack on the
 * passwords, so the upstream's ACLs should keep it to the gateway's principal.
 */
public final class UpstreamScramCredentials implements ScramCredentialStore.Remote, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UpstreamScramCredentials.class);
    static final String TOPIC = "pier.gateway.credentials.topic";
    static final String DEFAULT_TOPIC = "__pier_scram_credentials";

    private final ScramCredentialStore store;
    private CompactedTopic table;

    private UpstreamScramCredentials(ScramCredentialStore store) {
        this.store = store;
    }

    /**
     * Reads the upstream's credentials into {@code store} (a {@link ScramCredentialStore#remote}
     * one), returning once it has every one written so far, and sends its changes there from now on.
     */
    public static UpstreamScramCredentials start(Map<String, String> config, Map<String, Object> upstream,
            ScramCredentialStore store) throws Exception {
        UpstreamScramCredentials credentials = new UpstreamScramCredentials(store);
        credentials.table = CompactedTopic.start(config.getOrDefault(TOPIC, DEFAULT_TOPIC), upstream,
                "pier-gateway-credentials", credentials::apply);
        try {
            credentials.table.caughtUp().get(CompactedTopic.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            credentials.close();
            throw new IOException("cannot read the SCRAM credentials from upstream topic "
                    + credentials.table.topic() + ": " + e, e);
        }
        store.attach(credentials);
        return credentials;
    }

    @Override
    public void write(String user, ScramMechanism mechanism, ScramCredential credential) throws IOException {
        String value = credential == null ? null : encode(credential);
        try {
            table.sent(table.record(key(user, mechanism), value))
                    .get(CompactedTopic.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("writing the credential to upstream topic " + table.topic() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted writing a credential", e);
        }
    }

    private void apply(ConsumerRecord<String, String> r) {
        try {
            String[] k = r.key().split(" ");
            String user = new String(Base64.getDecoder().decode(k[0]), StandardCharsets.UTF_8);
            ScramMechanism mechanism = ScramMechanism.forMechanismName(k[1]);
            if (mechanism == null) {
                throw new IllegalArgumentException("unknown mechanism " + k[1]);
            }
            store.apply(user, mechanism, r.value() == null ? null : decode(r.value()));
        } catch (RuntimeException e) {
            LOG.warn("Skipping an unreadable SCRAM credential at offset {} of {}: {}", r.offset(), table.topic(),
                    e.toString());
        }
    }

    static String key(String user, ScramMechanism mechanism) {
        return Base64.getEncoder().encodeToString(user.getBytes(StandardCharsets.UTF_8)) + " "
                + mechanism.mechanismName();
    }

    static String encode(ScramCredential c) {
        Base64.Encoder b64 = Base64.getEncoder();
        return b64.encodeToString(c.salt()) + " " + b64.encodeToString(c.storedKey()) + " "
                + b64.encodeToString(c.serverKey()) + " " + c.iterations();
    }

    static ScramCredential decode(String value) {
        String[] f = value.split(" ");
        if (f.length != 4) {
            throw new IllegalArgumentException("expected 4 fields");
        }
        Base64.Decoder b64 = Base64.getDecoder();
        return new ScramCredential(b64.decode(f[0]), b64.decode(f[1]), b64.decode(f[2]), Integer.parseInt(f[3]));
    }

    @Override
    public void close() {
        if (table != null) {
            table.close();
        }
    }
}
