package io.pier.gateway;

import io.pier.security.acl.AclAuthorizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ACLs a gateway's listeners enforce, the same on every node: kept in a compacted topic on the
 * upstream ({@value #TOPIC}, default {@value #DEFAULT_TOPIC}), one record per binding (the key
 * names the whole binding; a null value removes it), which every node reads into its {@link
 * AclAuthorizer}. A change made through any node (kafka-acls, Admin) is written there and answered
 * once this node has read it back; the others read it a moment later, as Kafka's brokers learn an
 * ACL from the metadata log a moment after the controller took it.
 */
public final class UpstreamAcls implements AclAuthorizer.Remote, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UpstreamAcls.class);
    static final String TOPIC = "pier.gateway.acls.topic";
    static final String DEFAULT_TOPIC = "__pier_acls";
    /** A present binding's value; its key says everything. */
    private static final String PRESENT = "1";

    private final AclAuthorizer authorizer;
    private CompactedTopic table;

    private UpstreamAcls(AclAuthorizer authorizer) {
        this.authorizer = authorizer;
    }

    /**
     * Reads the upstream's ACLs into {@code authorizer} (an {@link AclAuthorizer#remote} one),
     * returning once it has every one written so far, and sends its changes there from now on.
     */
    public static UpstreamAcls start(Map<String, String> config, Map<String, Object> upstream,
            AclAuthorizer authorizer) throws Exception {
        UpstreamAcls acls = new UpstreamAcls(authorizer);
        acls.table = CompactedTopic.start(config.getOrDefault(TOPIC, DEFAULT_TOPIC), upstream, "pier-gateway-acls",
                acls::apply);
        try {
            acls.table.caughtUp().get(CompactedTopic.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            acls.close();
            throw new IOException("cannot read the ACLs from upstream topic " + acls.table.topic() + ": " + e, e);
        }
        authorizer.attach(acls);
        return acls;
    }

    @Override
    public void write(List<AclBinding> added, List<AclBinding> removed) throws IOException {
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        added.forEach(b -> writes.add(table.sent(table.record(key(b), PRESENT))));
        removed.forEach(b -> writes.add(table.sent(table.record(key(b), null))));
        try {
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
                    .get(CompactedTopic.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("writing ACLs to upstream topic " + table.topic() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted writing ACLs", e);
        }
    }

    private void apply(ConsumerRecord<String, String> r) {
        try {
            authorizer.apply(binding(r.key()), r.value() != null);
        } catch (RuntimeException e) {
            LOG.warn("Skipping an unreadable ACL at offset {} of {}: {}", r.offset(), table.topic(), e.toString());
        }
    }

    /** The binding's seven fields, each in base64 (names and principals may hold any character). */
    static String key(AclBinding b) {
        return String.join(" ", encode(b.pattern().resourceType().name()), encode(b.pattern().name()),
                encode(b.pattern().patternType().name()), encode(b.entry().principal()), encode(b.entry().host()),
                encode(b.entry().operation().name()), encode(b.entry().permissionType().name()));
    }

    static AclBinding binding(String key) {
        String[] f = key.split(" ", -1);
        if (f.length != 7) {
            throw new IllegalArgumentException("expected 7 fields");
        }
        return new AclBinding(new ResourcePattern(ResourceType.valueOf(decode(f[0])), decode(f[1]),
                PatternType.valueOf(decode(f[2]))),
                new AccessControlEntry(decode(f[3]), decode(f[4]), AclOperation.valueOf(decode(f[5])),
                        AclPermissionType.valueOf(decode(f[6]))));
    }

    private static String encode(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        if (table != null) {
            table.close();
        }
    }
}
