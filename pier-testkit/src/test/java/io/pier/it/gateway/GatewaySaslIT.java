package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SASL on a gateway's own listeners, with the stock clients: two nodes with SASL_PLAINTEXT
 * listeners (PLAIN from the listener's JAAS users, SCRAM from credentials both nodes read from the
 * upstream). A SCRAM user added through one node (kafka-configs' AlterUserScramCredentials) logs in
 * at the other, which never had it in its own settings, and produces and share-consumes through
 * both; a wrong password is refused; a user deleted through the second node can no longer log in
 * at the first; the upstream's topic holds no password. With ACLs on as well, a SCRAM user's
 * principal is what the nodes authorize, by ACLs set through one node and enforced by both.
 */
@Timeout(180)
class GatewaySaslIT {
    private static final long WAIT_MS = 30_000;
    private static final String PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule "
            + "required username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\";";

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().shareGroups(false).build();

    private final List<Pier> nodes = new ArrayList<>();

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    private Pier startNode(int id, boolean bootstrapUsers) throws Exception {
        return startNode(id, bootstrapUsers, false);
    }

    /** With {@code acls}, Kafka's StandardAuthorizer, admin (the nodes' own principal too) a super user. */
    private Pier startNode(int id, boolean bootstrapUsers, boolean acls) throws Exception {
        Map<String, String> s = new HashMap<>();
        s.put("node.id", String.valueOf(id));
        s.put("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers());
        s.put("pier.gateway.session.timeout.ms", "6000");
        s.put("listeners", "SASL_PLAINTEXT://127.0.0.1:0");
        s.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512");
        s.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS);
        // the nodes reach each other on that listener too
        s.put("pier.gateway.peer.security.protocol", "SASL_PLAINTEXT");
        s.put("pier.gateway.peer.sasl.mechanism", "PLAIN");
        s.put("pier.gateway.peer.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule"
                + " required username=\"admin\" password=\"admin-secret\";");
        if (bootstrapUsers) {
            s.put("pier.sasl.scram.bootstrap", "SCRAM-SHA-512=[name=admin,password=admin-secret]");
        }
        if (acls) {
            s.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            s.put("super.users", "User:admin");
        }
        Pier node = Pier.builder().configs(s).start();
        nodes.add(node);
        return node;
    }

    private static Map<String, Object> client(String bootstrap, String mechanism, String user, String password) {
        Map<String, Object> p = new HashMap<>();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
        p.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    @Test
    void shouldAuthenticateWithCredentialsEveryNodeReadsFromTheUpstream() throws Exception {
        Pier one = startNode(1, true);
        Pier two = startNode(2, false);
        String both = one.bootstrapServers() + "," + two.bootstrapServers();

        // a SCRAM user added through node 1 (as admin, SCRAM from node 1's bootstrap setting)
        try (Admin admin = Admin.create(client(one.bootstrapServers(), "SCRAM-SHA-512", "admin", "admin-secret"))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "carol-secret")))
                    .all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        // logs in at node 2, which had no SCRAM user in its settings, and administers, produces,
        // share-consumes through both nodes
        Map<String, Object> carol = client(two.bootstrapServers(), "SCRAM-SHA-512", "carol", "carol-secret");
        String topic = "sasl-gw";
        try (Admin admin = Admin.create(carol)) {
            assertThat(admin.describeUserScramCredentials().all().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .containsKeys("admin", "carol");
            assertThat(admin.describeUserScramCredentials(List.of("carol")).description("carol")
                    .get(WAIT_MS, TimeUnit.MILLISECONDS).credentialInfos())
                    .containsExactly(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192));
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "sasl-gw-share"),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        Map<String, Object> producerProps = new HashMap<>(client(both, "SCRAM-SHA-512", "carol", "carol-secret"));
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        List<String> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < 20; i++) {
                sent.add("v" + i);
                producer.send(new ProducerRecord<>(topic, i % 2, null, "v" + i)).get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
        Map<String, Object> shareProps = shareConsumer(client(both, "PLAIN", "admin", "admin-secret"),
                "sasl-gw-share");
        assertThat(consume(shareProps, topic, sent.size())).containsExactlyInAnyOrderElementsOf(sent);

        // a wrong password is refused at either node
        for (Pier node : nodes) {
            try (Admin admin = Admin.create(client(node.bootstrapServers(), "SCRAM-SHA-512", "carol", "wrong"))) {
                assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                        .cause().isInstanceOf(SaslAuthenticationException.class);
            }
        }
        // deleted through node 2: node 1 refuses carol from then on
        try (Admin admin = Admin.create(carol)) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("carol",
                    ScramMechanism.SCRAM_SHA_512))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            try (Admin admin = Admin.create(client(one.bootstrapServers(), "SCRAM-SHA-512", "carol",
                    "carol-secret"))) {
                assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(SaslAuthenticationException.class);
            }
        });

        // the upstream keeps salts and keys, never a password
        Map<String, Object> raw = new HashMap<>();
        raw.put("bootstrap.servers", UPSTREAM.bootstrapServers());
        raw.put("key.deserializer", StringDeserializer.class.getName());
        raw.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(raw)) {
            TopicPartition tp = new TopicPartition("__pier_scram_credentials", 0);
            c.assign(Set.of(tp));
            c.seekToBeginning(Set.of(tp));
            List<ConsumerRecord<String, String>> records = new ArrayList<>();
            long end = c.endOffsets(Set.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (c.position(tp) < end && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            assertThat(records).isNotEmpty().noneMatch(r -> r.value() != null
                    && (r.value().contains("carol-secret") || r.value().contains("admin-secret")));
        }
    }

    @Test
    void shouldAuthorizeASaslUserByTheAclsEveryNodeReadsFromTheUpstream() throws Exception {
        // Given two nodes with SASL listeners and ACLs on, a SCRAM user dave added through node 1,
        // and a topic dave has no ACL on
        Pier one = startNode(1, true, true);
        Pier two = startNode(2, false, true);
        String both = one.bootstrapServers() + "," + two.bootstrapServers();
        String topic = "sasl-acl";
        String group = "sasl-acl-share";
        Map<String, Object> admin = client(one.bootstrapServers(), "SCRAM-SHA-512", "admin", "admin-secret");
        try (Admin a = Admin.create(admin)) {
            a.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("dave",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "dave-secret")))
                    .all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            a.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            a.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        Map<String, Object> dave = client(both, "SCRAM-SHA-512", "dave", "dave-secret");

        // When dave produces through node 2: refused, his principal (from SCRAM) has no WRITE
        assertThatThrownBy(() -> produce(two.bootstrapServers(), topic, "refused"))
                .hasCauseInstanceOf(TopicAuthorizationException.class);

        // Then, once admin grants him WRITE and READ on the topic and READ on the group through
        // node 2, he produces through node 1 (which was not asked) and share-consumes through both
        List<AclBinding> grants = List.of(allow(ResourceType.TOPIC, topic, AclOperation.WRITE),
                allow(ResourceType.TOPIC, topic, AclOperation.READ),
                allow(ResourceType.GROUP, group, AclOperation.READ));
        try (Admin a = Admin.create(client(two.bootstrapServers(), "PLAIN", "admin", "admin-secret"))) {
            a.createAcls(grants).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        List<String> sent = new ArrayList<>();
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
                .untilAsserted(() -> produce(one.bootstrapServers(), topic, "first"));
        sent.add("first");
        for (int i = 0; i < 10; i++) {
            produce(both, topic, "v" + i);
            sent.add("v" + i);
        }
        Map<String, Object> shareProps = shareConsumer(dave, group);
        assertThat(consume(shareProps, topic, sent.size())).containsExactlyInAnyOrderElementsOf(sent);

        // and once the group ACL is revoked through node 1, node 2 refuses dave's share consumer too
        try (Admin a = Admin.create(admin)) {
            a.deleteAcls(List.of(grants.get(2).toFilter())).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        shareProps.put("bootstrap.servers", two.bootstrapServers());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            try (KafkaShareConsumer<String, String> share = new KafkaShareConsumer<>(shareProps)) {
                share.subscribe(List.of(topic));
                assertThatThrownBy(() -> {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (System.nanoTime() < deadline) {
                        share.poll(Duration.ofMillis(200));
                    }
                }).isInstanceOf(GroupAuthorizationException.class);
            }
        });
    }

    private static Map<String, Object> shareConsumer(Map<String, Object> client, String group) {
        Map<String, Object> props = new HashMap<>(client);
        props.put("group.id", group);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        return props;
    }

    /** A share consumer's values from {@code topic}, each accepted: {@code count}, or fewer after WAIT_MS. */
    private static List<String> consume(Map<String, Object> props, String topic, int count) {
        List<String> received = new ArrayList<>();
        try (KafkaShareConsumer<String, String> share = new KafkaShareConsumer<>(props)) {
            share.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (received.size() < count && System.nanoTime() < deadline) {
                share.poll(Duration.ofMillis(200)).forEach(r -> received.add(r.value()));
                share.commitSync(Duration.ofMillis(WAIT_MS));
            }
        }
        return received;
    }

    private static AclBinding allow(ResourceType type, String name, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:dave", "*", op, AclPermissionType.ALLOW));
    }

    /** One record as dave, waiting for its acknowledgement; throws the send's failure. */
    private static void produce(String bootstrap, String topic, String value) throws Exception {
        Map<String, Object> props = new HashMap<>(client(bootstrap, "SCRAM-SHA-512", "dave", "dave-secret"));
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("max.block.ms", 10_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(topic, null, value)).get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }
}
