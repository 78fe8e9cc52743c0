package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.server.Pier;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/**
 * {@link AclChecks} on one broker, whose authorizer takes each change before it answers, and what
 * only a broker has: log directories, and ACLs kept in its own data directory across a restart.
 */
class AclIT extends AclChecks {
    private Pier pier;

    @Override
    void startCluster() throws Exception {
        pier = start(dir.resolve("data"));
    }

    private Pier start(Path data) throws Exception {
        return Pier.builder().configs(certs.serverSettings()).dataDir(data)
                .config("listeners", "SSL://127.0.0.1:0")
                .config("ssl.client.auth", "required")
                .config("ssl.principal.mapping.rules", PRINCIPAL_RULES)
                .config("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .config("super.users", "User:admin")
                .start();
    }

    @Override
    void stopCluster() {
        if (pier != null) {
            pier.close();
        }
    }

    @Override
    String bootstrapServers() {
        return pier.bootstrapServers();
    }

    @Override
    void awaitEveryNode(List<AclBinding> present, List<AclBinding> absent) {
        // one broker: a change is in force once CreateAcls or DeleteAcls answered
    }

    @Test
    void shouldDescribeLogDirsWithDescribeAndMoveReplicasWithAlterOnTheCluster() throws Exception {
        // Given carol, a principal of this test alone, and a topic
        Map<String, Object> carol = certs.clientSettings(certs.clientKeyStore("carol", "CN=carol,O=Pier"));
        createTopic("acl-log-dirs");
        TopicPartitionReplica replica = new TopicPartitionReplica("acl-log-dirs", 0, 1);
        String dataDir = pier.dataDir().toAbsolutePath().normalize().toString();
        try (Admin a = Admin.create(props(carol))) {
            // Without DESCRIBE or ALTER on the cluster, both are refused, as on Kafka
            assertThatThrownBy(() -> a.describeLogDirs(List.of(1)).allDescriptions().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .hasCauseInstanceOf(ClusterAuthorizationException.class);
            assertThatThrownBy(() -> a.alterReplicaLogDirs(Map.of(replica, dataDir)).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS)).hasCauseInstanceOf(ClusterAuthorizationException.class);

            // With them, the log directory is described and the replica stays where it is
            grant(allow(ResourceType.CLUSTER, "kafka-cluster", "carol", AclOperation.DESCRIBE),
                    allow(ResourceType.CLUSTER, "kafka-cluster", "carol", AclOperation.ALTER));
            assertThat(a.describeLogDirs(List.of(1)).allDescriptions().get(WAIT_MS, TimeUnit.MILLISECONDS).get(1)
                    .get(dataDir).replicaInfos()).containsKey(new TopicPartition("acl-log-dirs", 0));
            a.alterReplicaLogDirs(Map.of(replica, dataDir)).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void shouldKeepAclsAcrossARestart() throws Exception {
        Path data = dir.resolve("restart-data");
        AclBinding acl = allow(ResourceType.GROUP, "kept-", "alice", AclOperation.READ);
        AclBinding prefixed = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "kept-", PatternType.PREFIXED),
                new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.DENY));
        Pier first = start(data);
        try (Admin a = Admin.create(Map.of("bootstrap.servers", first.bootstrapServers(), "security.protocol", "SSL",
                "ssl.truststore.location", admin.get("ssl.truststore.location"),
                "ssl.truststore.password", admin.get("ssl.truststore.password"),
                "ssl.keystore.location", admin.get("ssl.keystore.location"),
                "ssl.keystore.password", admin.get("ssl.keystore.password"),
                "ssl.key.password", admin.get("ssl.key.password")))) {
            a.createAcls(List.of(acl, prefixed)).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        } finally {
            first.close();
        }
        Pier second = start(data);
        try {
            Map<String, Object> p = new HashMap<>(admin);
            p.put("bootstrap.servers", second.bootstrapServers());
            try (Admin a = Admin.create(p)) {
                assertThat(a.describeAcls(AclBindingFilter.ANY).values().get(WAIT_MS, TimeUnit.MILLISECONDS))
                        .containsExactlyInAnyOrder(acl, prefixed);
            }
        } finally {
            second.close();
        }
    }
}
