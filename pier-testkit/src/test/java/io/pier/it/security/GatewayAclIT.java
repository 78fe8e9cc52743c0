package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ScrapedMetrics;
import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link AclChecks} through three gateway nodes over one Kafka upstream: each node checks its
 * clients' principals itself (the upstream, without an authorizer, sees only the gateways), and
 * an ACL set through any node is kept on the upstream and enforced by all three. The nodes reach
 * each other on the same mTLS listeners with the admin certificate, a super user. Then, what only
 * a gateway has: a node that joins later enforces every ACL set before it came.
 */
class GatewayAclIT extends AclChecks {
    private static final int NODES = 3;

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().shareGroups(false).build();

    private final List<Pier> nodes = new ArrayList<>();

    @Override
    void startCluster() throws Exception {
        for (int id = 1; id <= NODES; id++) {
            nodes.add(startNode(id));
        }
        try (Admin a = Admin.create(props(admin))) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(a.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                            .extracting(Node::id).containsExactlyInAnyOrder(1, 2, 3));
        }
    }

    private Pier startNode(int id) throws Exception {
        Map<String, String> s = new HashMap<>(certs.serverSettings());
        s.put("node.id", String.valueOf(id));
        s.put("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers());
        s.put("pier.gateway.session.timeout.ms", "6000");
        s.put("listeners", "SSL://127.0.0.1:0");
        s.put("ssl.client.auth", "required");
        s.put("ssl.principal.mapping.rules", PRINCIPAL_RULES);
        s.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        s.put("super.users", "User:admin");
        admin.forEach((k, v) -> s.put("pier.gateway.peer." + k, String.valueOf(v)));
        return Pier.builder().configs(s).start();
    }

    @Override
    void stopCluster() {
        nodes.forEach(Pier::close);
    }

    @Override
    String bootstrapServers() {
        return nodes.stream().map(Pier::bootstrapServers).collect(Collectors.joining(","));
    }

    /**
     * The node that answered the change had read it back first; it is in force everywhere once
     * every node enforces as many bindings as that one (a change only adds or only removes), and
     * the bindings are the ones asked for.
     */
    @Override
    void awaitEveryNode(List<AclBinding> present, List<AclBinding> absent) throws Exception {
        try (Admin a = Admin.create(props(admin))) {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                assertThat(bindingCounts()).as("ACL bindings per node").hasSize(1);
                List<AclBinding> all = new ArrayList<>(a.describeAcls(AclBindingFilter.ANY).values()
                        .get(WAIT_MS, TimeUnit.MILLISECONDS));
                assertThat(all).containsAll(present).noneMatch(absent::contains);
            });
        }
    }

    private Set<Double> bindingCounts() throws Exception {
        Set<Double> counts = new HashSet<>();
        for (Pier node : nodes) {
            counts.add(ScrapedMetrics.scrape(node.metricsPort()).value("pier_acl_bindings"));
        }
        return counts;
    }

    @Test
    void shouldEnforceOnANodeThatJoinsLaterEveryAclSetBeforeIt() throws Exception {
        // Given an ACL set through the three nodes
        AclBinding acl = allow(ResourceType.TOPIC, "acl-late-node", "alice", AclOperation.WRITE);
        grant(acl);
        double before = bindingCounts().iterator().next();

        // When a fourth node starts, it has read them all before it serves, and Alice may write with it in the cluster
        Pier late = startNode(4);
        nodes.add(late);
        try {
            assertThat(ScrapedMetrics.scrape(late.metricsPort()).value("pier_acl_bindings")).isEqualTo(before);
            createTopic("acl-late-node");
            produce(alice, "acl-late-node", 2);
        } finally {
            // the other tests run on three nodes
            nodes.remove(late);
            late.close();
        }
    }
}
