package io.pier.security.acl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AclAuthorizerTest {
    private static final KafkaPrincipal ALICE = new KafkaPrincipal("User", "alice");
    private static final KafkaPrincipal BOB = new KafkaPrincipal("User", "bob");
    private static final String HOST = "10.0.0.1";

    @TempDir
    Path dir;

    private AclAuthorizer open(Map<String, String> settings) throws IOException {
        return AclAuthorizer.open(AuthorizerConfig.fromProperties(settings), new AclStore(dir));
    }

    private AclAuthorizer open() throws IOException {
        return open(Map.of(AuthorizerConfig.AUTHORIZER_CLASS_NAME, AuthorizerConfig.KAFKA_STANDARD_AUTHORIZER));
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal,
            String host, AclOperation op, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, host, op, permission));
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern, String principal,
            AclOperation op) {
        return acl(type, name, pattern, principal, "*", op, AclPermissionType.ALLOW);
    }

    private static boolean may(AclAuthorizer a, KafkaPrincipal who, AclOperation op, ResourceType type,
            String name) {
        return a.authorize(who, HOST, op, type, name);
    }

    @Test
    void shouldDenyWithoutAclsAndAllowOnlyTheLiteralName() throws IOException {
        AclAuthorizer a = open();
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse();
        a.create(List.of(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ)));
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders")).isTrue();
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders2")).isFalse();
        assertThat(may(a, BOB, AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse();
        assertThat(may(a, ALICE, AclOperation.WRITE, ResourceType.TOPIC, "orders")).isFalse();
        // Same name, other resource type.
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.GROUP, "orders")).isFalse();
    }

    @Test
    void shouldMatchPrefixesAndWildcards() throws IOException {
        AclAuthorizer a = open();
        a.create(List.of(
                allow(ResourceType.TOPIC, "pay-", PatternType.PREFIXED, "User:alice", AclOperation.WRITE),
                allow(ResourceType.GROUP, "*", PatternType.LITERAL, "User:*", AclOperation.READ)));
        assertThat(may(a, ALICE, AclOperation.WRITE, ResourceType.TOPIC, "pay-eu")).isTrue();
        assertThat(may(a, ALICE, AclOperation.WRITE, ResourceType.TOPIC, "pay-")).isTrue();
        assertThat(may(a, ALICE, AclOperation.WRITE, ResourceType.TOPIC, "payroll")).isFalse();
        assertThat(may(a, BOB, AclOperation.READ, ResourceType.GROUP, "any-group")).isTrue();
        assertThat(may(a, BOB, AclOperation.DELETE, ResourceType.GROUP, "any-group")).isFalse();
    }

    @Test
    void shouldLetDenyWinOverAllow() throws IOException {
        AclAuthorizer a = open();
        a.create(List.of(
                allow(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:*", AclOperation.ALL),
                acl(ResourceType.TOPIC, "secret", PatternType.PREFIXED, "User:bob", "*", AclOperation.READ,
                        AclPermissionType.DENY)));
        assertThat(may(a, BOB, AclOperation.READ, ResourceType.TOPIC, "secret-1")).isFalse();
        // A DENY of READ does not deny the DESCRIBE that READ would imply.
        assertThat(may(a, BOB, AclOperation.DESCRIBE, ResourceType.TOPIC, "secret-1")).isTrue();
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "secret-1")).isTrue();
        a.create(List.of(acl(ResourceType.TOPIC, "secret-1", PatternType.LITERAL, "User:*", "*", AclOperation.ALL,
                AclPermissionType.DENY)));
        assertThat(may(a, ALICE, AclOperation.DESCRIBE, ResourceType.TOPIC, "secret-1")).isFalse();
    }

    @Test
    void shouldImplyDescribeAndDescribeConfigsAsKafka() throws IOException {
        AclAuthorizer a = open();
        a.create(List.of(
                allow(ResourceType.TOPIC, "r", PatternType.LITERAL, "User:alice", AclOperation.READ),
                allow(ResourceType.TOPIC, "w", PatternType.LITERAL, "User:alice", AclOperation.WRITE),
                allow(ResourceType.TOPIC, "d", PatternType.LITERAL, "User:alice", AclOperation.DELETE),
                allow(ResourceType.TOPIC, "a", PatternType.LITERAL, "User:alice", AclOperation.ALTER),
                allow(ResourceType.TOPIC, "c", PatternType.LITERAL, "User:alice", AclOperation.ALTER_CONFIGS),
                allow(ResourceType.TOPIC, "all", PatternType.LITERAL, "User:alice", AclOperation.ALL)));
        for (String t : List.of("r", "w", "d", "a", "all")) {
            assertThat(may(a, ALICE, AclOperation.DESCRIBE, ResourceType.TOPIC, t)).as(t).isTrue();
        }
        assertThat(may(a, ALICE, AclOperation.DESCRIBE, ResourceType.TOPIC, "c")).isFalse();
        assertThat(may(a, ALICE, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "c")).isTrue();
        assertThat(may(a, ALICE, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "r")).isFalse();
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "w")).isFalse();
        assertThat(may(a, ALICE, AclOperation.CREATE, ResourceType.TOPIC, "all")).isTrue();
    }

    @Test
    void shouldMatchHosts() throws IOException {
        AclAuthorizer a = open();
        a.create(List.of(acl(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", HOST, AclOperation.READ,
                AclPermissionType.ALLOW)));
        assertThat(a.authorize(ALICE, HOST, AclOperation.READ, ResourceType.TOPIC, "t")).isTrue();
        assertThat(a.authorize(ALICE, "10.0.0.2", AclOperation.READ, ResourceType.TOPIC, "t")).isFalse();
    }

    @Test
    void shouldAllowSuperUsersEverything() throws IOException {
        AclAuthorizer a = open(Map.of(AuthorizerConfig.AUTHORIZER_CLASS_NAME, "pier",
                AuthorizerConfig.SUPER_USERS, "User:admin; User:alice"));
        a.create(List.of(acl(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", "*", AclOperation.ALL,
                AclPermissionType.DENY)));
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "t")).isTrue();
        assertThat(may(a, new KafkaPrincipal("User", "admin"), AclOperation.ALTER, ResourceType.CLUSTER,
                AclAuthorizer.CLUSTER_NAME)).isTrue();
        assertThat(may(a, BOB, AclOperation.READ, ResourceType.TOPIC, "t")).isFalse();
    }

    @Test
    void shouldAllowEveryoneOnlyWhereTheResourceHasNoAcls() throws IOException {
        AclAuthorizer a = open(Map.of(AuthorizerConfig.AUTHORIZER_CLASS_NAME, "pier",
                AuthorizerConfig.ALLOW_EVERYONE_IF_NO_ACL_FOUND, "true"));
        a.create(List.of(allow(ResourceType.TOPIC, "guarded", PatternType.LITERAL, "User:alice",
                AclOperation.READ)));
        assertThat(may(a, BOB, AclOperation.WRITE, ResourceType.TOPIC, "open")).isTrue();
        assertThat(may(a, BOB, AclOperation.READ, ResourceType.TOPIC, "guarded")).isFalse();
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "guarded")).isTrue();
    }

    @Test
    void shouldKeepAclsAcrossRestartsAndDeleteByFilter() throws IOException {
        AclAuthorizer a = open();
        AclBinding weird = allow(ResourceType.GROUP, "g=1 :#\\ ü", PatternType.PREFIXED, "User:bob",
                AclOperation.READ);
        AclBinding topic = allow(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:alice", AclOperation.WRITE);
        assertThat(a.create(List.of(weird, topic))).containsOnlyNulls();
        AclAuthorizer reopened = open();
        assertThat(reopened.describe(AclBindingFilter.ANY)).containsExactlyInAnyOrder(weird, topic);
        assertThat(may(reopened, BOB, AclOperation.READ, ResourceType.GROUP, "g=1 :#\\ ü-x")).isTrue();

        AclBindingFilter groups = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.GROUP, null, PatternType.ANY), AccessControlEntryFilter.ANY);
        assertThat(reopened.delete(List.of(groups))).containsExactly(List.of(weird));
        assertThat(open().describe(AclBindingFilter.ANY)).containsExactly(topic);
        assertThat(Files.exists(dir.resolve(AclStore.FILE_NAME))).isTrue();
    }

    @Test
    void shouldRefuseInvalidBindings() throws IOException {
        AclAuthorizer a = open();
        List<?> results = a.create(List.of(
                allow(ResourceType.CLUSTER, "other", PatternType.LITERAL, "User:alice", AclOperation.ALTER),
                allow(ResourceType.TOPIC, "t", PatternType.LITERAL, "alice", AclOperation.READ),
                allow(ResourceType.CLUSTER, AclAuthorizer.CLUSTER_NAME, PatternType.LITERAL, "User:alice",
                        AclOperation.ALTER)));
        assertThat(results.get(0)).isNotNull();
        assertThat(results.get(1)).isNotNull();
        assertThat(results.get(2)).isNull();
        assertThat(a.describe(AclBindingFilter.ANY)).hasSize(1);
    }

    @Test
    void shouldAllowAnOperationOnSomeResourceOfAType() throws IOException {
        AclAuthorizer a = open();
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        a.create(List.of(allow(ResourceType.TOPIC, "logs-", PatternType.PREFIXED, "User:alice", AclOperation.WRITE)));
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isTrue();
        assertThat(a.authorizeAny(BOB, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        a.create(List.of(acl(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:alice", "*", AclOperation.WRITE,
                AclPermissionType.DENY)));
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
    }

    @Test
    void shouldLetADenyOnTheSameNameOrAPrefixCancelAnAllowAsKafka() throws IOException {
        AclAuthorizer a = open();
        a.create(List.of(allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.WRITE),
                acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.WRITE,
                        AclPermissionType.DENY)));
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        // An allowed prefix under a denied shorter prefix is dominated too.
        a.create(List.of(allow(ResourceType.TOPIC, "logs-app-", PatternType.PREFIXED, "User:alice", AclOperation.WRITE),
                acl(ResourceType.TOPIC, "logs-", PatternType.PREFIXED, "User:alice", "*", AclOperation.WRITE,
                        AclPermissionType.DENY)));
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isFalse();
        // A deny elsewhere does not cancel it.
        a.create(List.of(allow(ResourceType.TOPIC, "metrics", PatternType.LITERAL, "User:alice", AclOperation.WRITE)));
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.WRITE, ResourceType.TOPIC)).isTrue();
        // Nothing is implied: WRITE on a topic is not DESCRIBE on some topic here.
        assertThat(a.authorizeAny(ALICE, HOST, AclOperation.DESCRIBE, ResourceType.TOPIC)).isFalse();
    }

    @Test
    void shouldRefuseUnknownAuthorizersAndBadSettings() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AuthorizerConfig.fromProperties(
                Map.of(AuthorizerConfig.AUTHORIZER_CLASS_NAME, "kafka.security.authorizer.AclAuthorizer")))
                .hasMessageContaining(AuthorizerConfig.AUTHORIZER_CLASS_NAME);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AuthorizerConfig.fromProperties(
                Map.of(AuthorizerConfig.SUPER_USERS, "alice")))
                .hasMessageContaining(AuthorizerConfig.SUPER_USERS);
        assertThat(AuthorizerConfig.fromProperties(Map.of()).enabled()).isFalse();
    }

    /** A gateway's authorizer: changes go to the shared table and count only once read back. */
    @Test
    void shouldSeeARemoteChangeOnlyOnceReadBack() {
        AclAuthorizer a = AclAuthorizer.remote(AuthorizerConfig.fromProperties(
                Map.of(AuthorizerConfig.AUTHORIZER_CLASS_NAME, AuthorizerConfig.KAFKA_STANDARD_AUTHORIZER)));
        AclBinding read = allow(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", AclOperation.READ);
        // Not attached yet: a change has nowhere to go and fails, nothing is seen.
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> a.create(List.of(read)))
                .hasMessageContaining("cannot write the ACLs");
        assertThat(a.describe(AclBindingFilter.ANY)).isEmpty();

        List<List<AclBinding>> written = new java.util.ArrayList<>();
        a.attach((added, removed) -> {
            written.add(added);
            written.add(removed);
        });
        a.create(List.of(read));
        assertThat(written).containsExactly(List.of(read), List.of());
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse(); // not read back yet

        a.apply(read, true);
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders")).isTrue();
        written.clear();
        assertThat(a.delete(List.of(read.toFilter()))).containsExactly(List.of(read));
        assertThat(written).containsExactly(List.of(), List.of(read));
        a.apply(read, false);
        assertThat(may(a, ALICE, AclOperation.READ, ResourceType.TOPIC, "orders")).isFalse();
    }
}
