package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.it.admin.KafkaTool;
import io.pier.testkit.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeShareGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.AclCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * ACLs with the stock clients over mutual TLS, against whatever a subclass starts (one broker,
 * or gateway nodes): the certificates CN=admin (a super user), CN=alice and CN=bob become
 * User:admin, User:alice and User:bob through ssl.principal.mapping.rules. Each allowed case is
 * shown to work and each denied one to fail with Kafka's error. A grant or revoke returns once
 * {@link #awaitEveryNode} says every node enforces it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AclChecks {
    static final long WAIT_MS = 30_000;
    /** The principal mapping every listener of these tests uses. */
    static final String PRINCIPAL_RULES = "RULE:^CN=([a-z]+),O=Pier$/$1/L,DEFAULT";
    Path dir;
    TestCertificates certs;
    Map<String, Object> admin;
    Map<String, Object> alice;
    Map<String, Object> bob;

    @BeforeAll
    void startAll() throws Exception {
        dir = Files.createTempDirectory("pier-acl-");
        certs = TestCertificates.create(dir.resolve("certs"));
        admin = certs.clientSettings(certs.clientKeyStore("admin", "CN=admin,O=Pier"));
        alice = certs.clientSettings(certs.clientKeyStore("alice", "CN=alice,O=Pier"));
        bob = certs.clientSettings(certs.clientKeyStore("bob", "CN=bob,O=Pier"));
        startCluster();
    }

    /** Starts what the tests run against, with mTLS listeners, an authorizer and User:admin a super user. */
    abstract void startCluster() throws Exception;

    abstract void stopCluster() throws Exception;

    /** Every node's address, for bootstrap.servers. */
    abstract String bootstrapServers();

    /** Returns once every node enforces {@code present} and none enforces {@code absent} any more. */
    abstract void awaitEveryNode(List<AclBinding> present, List<AclBinding> absent) throws Exception;

    @AfterAll
    void stopAll() throws Exception {
        stopCluster();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
    }

    Map<String, Object> props(Map<String, Object> who) {
        Map<String, Object> p = new HashMap<>(who);
        p.put("bootstrap.servers", bootstrapServers());
        return p;
    }

    static AclBinding allow(ResourceType type, String name, String user, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW));
    }

    void grant(AclBinding... acls) throws Exception {
        try (Admin a = Admin.create(props(admin))) {
            a.createAcls(List.of(acls)).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        awaitEveryNode(List.of(acls), List.of());
    }

    void revoke(AclBinding acl) throws Exception {
        try (Admin a = Admin.create(props(admin))) {
            a.deleteAcls(List.of(acl.toFilter())).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        awaitEveryNode(List.of(), List.of(acl));
    }

    void createTopic(String name) throws Exception {
        try (Admin a = Admin.create(props(admin))) {
            a.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    void produce(Map<String, Object> who, String topic, int count) throws Exception {
        try (KafkaProducer<String, String> p = producer(who)) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, "v" + i)).get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    KafkaProducer<String, String> producer(Map<String, Object> who) {
        Map<String, Object> p = props(who);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", "20000");
        p.put("request.timeout.ms", "10000");
        return new KafkaProducer<>(p);
    }

    private static Throwable cause(ExecutionException e) {
        return e.getCause();
    }

    @Test
    void shouldProduceOnlyWithWriteOnTheTopic() throws Exception {
        createTopic("acl-produce");
        // Bob may write elsewhere, which lets his idempotent producer get an id (Kafka 3+, KIP-679).
        // DESCRIBE lets Bob's Metadata through, so the refusal comes from Produce itself.
        grant(allow(ResourceType.TOPIC, "acl-produce", "alice", AclOperation.WRITE),
                allow(ResourceType.TOPIC, "acl-produce", "bob", AclOperation.DESCRIBE),
                allow(ResourceType.TOPIC, "acl-produce-bob", "bob", AclOperation.WRITE));
        produce(alice, "acl-produce", 3);
        try (KafkaProducer<String, String> p = producer(bob)) {
            assertThatThrownBy(() -> p.send(new ProducerRecord<>("acl-produce", "x")).get(WAIT_MS,
                    TimeUnit.MILLISECONDS)).hasCauseInstanceOf(TopicAuthorizationException.class);
        }
    }

    @Test
    void shouldRefuseATransactionalProducerWithoutWriteOnItsTransactionalId() throws Exception {
        createTopic("acl-txn");
        grant(allow(ResourceType.TOPIC, "acl-txn", "bob", AclOperation.WRITE));
        Map<String, Object> p = props(bob);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("transactional.id", "bob-txn");
        p.put("max.block.ms", "15000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            assertThatThrownBy(producer::initTransactions).isInstanceOf(TransactionalIdAuthorizationException.class);
        }
    }

    @Test
    void shouldCommitATransactionWithWriteOnTheTransactionalIdAndTopic() throws Exception {
        createTopic("acl-txn-ok");
        grant(allow(ResourceType.TOPIC, "acl-txn-ok", "alice", AclOperation.WRITE),
                allow(ResourceType.TRANSACTIONAL_ID, "alice-txn", "alice", AclOperation.WRITE));
        Map<String, Object> p = props(alice);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("transactional.id", "alice-txn");
        p.put("max.block.ms", "15000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("acl-txn-ok", "t0")).get(WAIT_MS, TimeUnit.MILLISECONDS);
            producer.commitTransaction();
            // A topic without WRITE is refused inside the transaction (AddPartitionsToTxn).
            producer.beginTransaction();
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>("acl-produce-nobody", "x"))
                    .get(WAIT_MS, TimeUnit.MILLISECONDS)).hasCauseInstanceOf(TopicAuthorizationException.class);
            // An abortable error: the transaction is aborted and the producer usable again. Left
            // open, close() would abort it and then idle 30 s before its I/O thread ends.
            producer.abortTransaction();
        }
    }

    @Test
    void shouldFetchOnlyWithReadOnTheTopic() throws Exception {
        createTopic("acl-fetch");
        produce(admin, "acl-fetch", 2);
        // DESCRIBE lets Bob's Metadata through, so the refusal comes from Fetch itself.
        grant(allow(ResourceType.TOPIC, "acl-fetch", "alice", AclOperation.READ),
                allow(ResourceType.TOPIC, "acl-fetch", "bob", AclOperation.DESCRIBE));
        TopicPartition tp = new TopicPartition("acl-fetch", 0);
        try (KafkaConsumer<String, String> c = consumer(alice)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (got.size() < 2 && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
            }
            assertThat(got).containsExactly("v0", "v1");
        }
        try (KafkaConsumer<String, String> c = consumer(bob)) {
            c.assign(List.of(tp));
            c.seek(tp, 0);
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
                while (System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(200));
                }
            }).isInstanceOf(TopicAuthorizationException.class);
        }
    }

    KafkaConsumer<String, String> consumer(Map<String, Object> who) {
        Map<String, Object> p = props(who);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    @Test
    void shouldConsumeInAGroupOnlyWithReadOnTheGroup() throws Exception {
        createTopic("acl-group");
        produce(admin, "acl-group", 2);
        grant(allow(ResourceType.TOPIC, "acl-group", "alice", AclOperation.READ),
                allow(ResourceType.TOPIC, "acl-group", "bob", AclOperation.READ),
                allow(ResourceType.GROUP, "cg-alice", "alice", AclOperation.READ));
        Map<String, Object> p = new HashMap<>();
        p.put("auto.offset.reset", "earliest");
        p.put("group.id", "cg-alice");
        try (KafkaConsumer<String, String> c = consumer(alice, p)) {
            c.subscribe(List.of("acl-group"));
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (got.size() < 2 && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
            }
            assertThat(got).containsExactly("v0", "v1");
            c.commitSync(Duration.ofMillis(WAIT_MS));
        }
        try (Admin a = Admin.create(props(alice)); Admin b = Admin.create(props(bob))) {
            // DescribeGroups and OffsetFetch: DESCRIBE on the group.
            assertThat(a.describeConsumerGroups(List.of("cg-alice")).all().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .containsKey("cg-alice");
            assertThat(a.listConsumerGroupOffsets("cg-alice").partitionsToOffsetAndMetadata()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS)).containsKey(new TopicPartition("acl-group", 0));
            assertThat(catchThrowable(() -> b.describeConsumerGroups(List.of("cg-alice")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            assertThat(catchThrowable(() -> b.listConsumerGroupOffsets("cg-alice").partitionsToOffsetAndMetadata()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
        }
        p.put("group.id", "cg-bob");
        try (KafkaConsumer<String, String> c = consumer(bob, p)) {
            c.subscribe(List.of("acl-group"));
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
                while (System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(200));
                }
            }).isInstanceOf(GroupAuthorizationException.class);
        }
    }

    KafkaConsumer<String, String> consumer(Map<String, Object> who, Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>(who);
        p.putAll(extra);
        return consumer(p);
    }

    @Test
    void shouldHideTopicsThePrincipalMayNotDescribe() throws Exception {
        createTopic("acl-visible");
        createTopic("acl-hidden");
        grant(allow(ResourceType.TOPIC, "acl-visible", "alice", AclOperation.DESCRIBE));
        try (Admin a = Admin.create(props(alice))) {
            assertThat(a.listTopics().names().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .contains("acl-visible").doesNotContain("acl-hidden");
            ExecutionException e = (ExecutionException) catchThrowable(() -> a.describeTopics(List.of("acl-hidden"))
                    .allTopicNames().get(WAIT_MS, TimeUnit.MILLISECONDS));
            assertThat(cause(e)).isInstanceOf(TopicAuthorizationException.class);
        }
        try (Admin a = Admin.create(props(admin))) {
            assertThat(a.listTopics().names().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .contains("acl-visible", "acl-hidden");
        }
    }

    private static Throwable catchThrowable(org.assertj.core.api.ThrowableAssert.ThrowingCallable c) {
        return org.assertj.core.api.Assertions.catchThrowable(c);
    }

    KafkaShareConsumer<String, String> shareConsumer(Map<String, Object> who, String group) {
        Map<String, Object> p = props(who);
        p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    void earliest(String group) throws Exception {
        try (Admin a = Admin.create(props(admin))) {
            a.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }


    @Test
    void shouldShareConsumeWithReadOnGroupAndTopic() throws Exception {
        createTopic("acl-share");
        produce(admin, "acl-share", 3);
        earliest("sg-alice");
        grant(allow(ResourceType.GROUP, "sg-alice", "alice", AclOperation.READ),
                allow(ResourceType.TOPIC, "acl-share", "alice", AclOperation.READ));
        try (KafkaShareConsumer<String, String> c = shareConsumer(alice, "sg-alice")) {
            c.subscribe(List.of("acl-share"));
            assertThat(Polls.values(c::poll, 2, WAIT_MS)).hasSizeGreaterThanOrEqualTo(2);
            c.commitSync(Duration.ofMillis(WAIT_MS));
            produce(admin, "acl-share", 1);
            assertThat(Polls.values(c::poll, 1, WAIT_MS)).isNotEmpty();
            // Without READ on the group the consumer can neither acknowledge what it holds nor fetch.
            revoke(allow(ResourceType.GROUP, "sg-alice", "alice", AclOperation.READ));
            Throwable ack = catchThrowable(() -> {
                Map<?, java.util.Optional<org.apache.kafka.common.KafkaException>> acks =
                        c.commitSync(Duration.ofMillis(WAIT_MS));
                acks.values().forEach(e -> e.ifPresent(x -> {
                    throw x;
                }));
                if (acks.isEmpty()) {
                    throw new AssertionError("nothing was acknowledged");
                }
            });
            assertThat(ack).isInstanceOf(GroupAuthorizationException.class);
            produce(admin, "acl-share", 1);
            assertThatThrownBy(() -> Polls.values(c::poll, 1, WAIT_MS)).isInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldRefuseAShareConsumerWithoutReadOnItsGroup() throws Exception {
        createTopic("acl-share-nogroup");
        grant(allow(ResourceType.TOPIC, "acl-share-nogroup", "bob", AclOperation.READ),
                allow(ResourceType.GROUP, "sg-bob", "bob", AclOperation.DESCRIBE));
        try (KafkaShareConsumer<String, String> c = shareConsumer(bob, "sg-bob")) {
            c.subscribe(List.of("acl-share-nogroup"));
            assertThatThrownBy(() -> Polls.values(c::poll, 1, WAIT_MS)).isInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldRefuseAShareConsumerWithoutDescribeOnItsTopic() throws Exception {
        createTopic("acl-share-notopic");
        grant(allow(ResourceType.GROUP, "sg-bob2", "bob", AclOperation.READ));
        try (KafkaShareConsumer<String, String> c = shareConsumer(bob, "sg-bob2")) {
            c.subscribe(List.of("acl-share-notopic"));
            assertThatThrownBy(() -> Polls.values(c::poll, 1, WAIT_MS)).isInstanceOf(TopicAuthorizationException.class);
        }
    }

    @Test
    void shouldRefuseShareFetchPerPartitionWithoutReadOnTheTopic() throws Exception {
        createTopic("acl-share-describe-only");
        produce(admin, "acl-share-describe-only", 1);
        earliest("sg-bob3");
        // DESCRIBE lets the heartbeat subscribe; ShareFetch needs READ.
        grant(allow(ResourceType.GROUP, "sg-bob3", "bob", AclOperation.READ),
                allow(ResourceType.TOPIC, "acl-share-describe-only", "bob", AclOperation.DESCRIBE));
        try (KafkaShareConsumer<String, String> c = shareConsumer(bob, "sg-bob3")) {
            c.subscribe(List.of("acl-share-describe-only"));
            assertThatThrownBy(() -> Polls.values(c::poll, 1, WAIT_MS)).isInstanceOf(TopicAuthorizationException.class);
        }
    }

    @Test
    void shouldCheckTheShareGroupAdminApis() throws Exception {
        createTopic("acl-share-admin");
        produce(admin, "acl-share-admin", 2);
        earliest("sg-admin");
        try (KafkaShareConsumer<String, String> c = shareConsumer(admin, "sg-admin")) {
            c.subscribe(List.of("acl-share-admin"));
            assertThat(Polls.values(c::poll, 2, WAIT_MS)).hasSize(2);
            c.commitSync(Duration.ofMillis(WAIT_MS));
        }
        TopicPartition tp = new TopicPartition("acl-share-admin", 0);
        grant(allow(ResourceType.GROUP, "sg-admin", "alice", AclOperation.READ),
                allow(ResourceType.TOPIC, "acl-share-admin", "alice", AclOperation.READ));
        try (Admin a = Admin.create(props(alice)); Admin b = Admin.create(props(bob))) {
            // ShareGroupDescribe: DESCRIBE on the group (implied by READ).
            assertThat(a.describeShareGroups(List.of("sg-admin")).all().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .containsKey("sg-admin");
            assertThat(catchThrowable(() -> b.describeShareGroups(List.of("sg-admin")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            // DescribeShareGroupOffsets: DESCRIBE group and topic.
            assertThat(a.listShareGroupOffsets(Map.of("sg-admin",
                    new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS).get("sg-admin")).containsKey(tp);
            assertThat(catchThrowable(() -> b.listShareGroupOffsets(Map.of("sg-admin",
                    new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            // AlterShareGroupOffsets: READ group and topic.
            a.alterShareGroupOffsets("sg-admin", Map.of(tp, 0L)).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(catchThrowable(() -> b.alterShareGroupOffsets("sg-admin", Map.of(tp, 0L)).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            // DeleteShareGroupOffsets: DELETE on the group, READ does not do.
            assertThat(catchThrowable(() -> a.deleteShareGroupOffsets("sg-admin", java.util.Set.of("acl-share-admin"))
                    .all().get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            grant(allow(ResourceType.GROUP, "sg-admin", "alice", AclOperation.DELETE));
            a.deleteShareGroupOffsets("sg-admin", java.util.Set.of("acl-share-admin")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
            // ListGroups shows only the groups the principal may describe.
            assertThat(b.listGroups().all().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .noneMatch(g -> g.groupId().equals("sg-admin"));
            assertThat(a.listGroups().all().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .anyMatch(g -> g.groupId().equals("sg-admin"));
            // DeleteGroups: DELETE on the group.
            assertThat(catchThrowable(() -> b.deleteShareGroups(List.of("sg-admin")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            a.deleteShareGroups(List.of("sg-admin")).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void shouldAnswerAuthorizedOperationsWhenAsked() throws Exception {
        createTopic("acl-ops");
        produce(admin, "acl-ops", 1);
        TopicPartition tp = new TopicPartition("acl-ops", 0);
        Map<String, Object> p = new HashMap<>();
        p.put("auto.offset.reset", "earliest");
        p.put("group.id", "cg-ops");
        p.put("group.protocol", "consumer");
        try (KafkaConsumer<String, String> c = consumer(admin, p)) {
            c.subscribe(List.of("acl-ops"));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (c.poll(Duration.ofMillis(200)).isEmpty() && System.nanoTime() < deadline) {
                // until the one record came
            }
            c.commitSync(Duration.ofMillis(WAIT_MS));
        }
        earliest("sg-ops");
        try (KafkaShareConsumer<String, String> c = shareConsumer(admin, "sg-ops")) {
            c.subscribe(List.of("acl-ops"));
            assertThat(Polls.values(c::poll, 1, WAIT_MS)).hasSize(1);
        }
        grant(allow(ResourceType.TOPIC, "acl-ops", "alice", AclOperation.READ),
                allow(ResourceType.GROUP, "cg-ops", "alice", AclOperation.READ),
                allow(ResourceType.GROUP, "cg-ops-classic", "alice", AclOperation.DELETE),
                allow(ResourceType.GROUP, "sg-ops", "alice", AclOperation.READ));
        Set<AclOperation> readAndDescribe = Set.of(AclOperation.READ, AclOperation.DESCRIBE);
        try (Admin a = Admin.create(props(alice)); Admin root = Admin.create(props(admin))) {
            // A group with committed offsets only: a classic group, described by DescribeGroups.
            root.alterConsumerGroupOffsets("cg-ops-classic", Map.of(tp, new OffsetAndMetadata(0))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(a.describeTopics(List.of("acl-ops"),
                    new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS).get("acl-ops").authorizedOperations())
                    .isEqualTo(readAndDescribe);
            assertThat(root.describeTopics(List.of("acl-ops"), new DescribeTopicsOptions()
                    .includeAuthorizedOperations(true)).allTopicNames().get(WAIT_MS, TimeUnit.MILLISECONDS)
                    .get("acl-ops").authorizedOperations()).hasSize(8);
            // Not asked: not answered.
            assertThat(a.describeTopics(List.of("acl-ops")).allTopicNames().get(WAIT_MS, TimeUnit.MILLISECONDS)
                    .get("acl-ops").authorizedOperations()).isNull();
            // Without DESCRIBE on the cluster, none of its operations are told.
            DescribeClusterOptions withOps = new DescribeClusterOptions().includeAuthorizedOperations(true);
            assertThat(a.describeCluster(withOps).authorizedOperations().get(WAIT_MS, TimeUnit.MILLISECONDS)).isEmpty();
            assertThat(root.describeCluster(withOps).authorizedOperations().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .contains(AclOperation.DESCRIBE, AclOperation.ALTER, AclOperation.CLUSTER_ACTION).hasSize(7);
            Map<String, ConsumerGroupDescription> groups = a.describeConsumerGroups(List.of("cg-ops", "cg-ops-classic"),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(groups.get("cg-ops").type()).isEqualTo(GroupType.CONSUMER);
            assertThat(groups.get("cg-ops").authorizedOperations()).isEqualTo(readAndDescribe);
            assertThat(groups.get("cg-ops-classic").type()).isEqualTo(GroupType.CLASSIC);
            assertThat(groups.get("cg-ops-classic").authorizedOperations())
                    .isEqualTo(Set.of(AclOperation.DELETE, AclOperation.DESCRIBE));
            assertThat(a.describeShareGroups(List.of("sg-ops"), new DescribeShareGroupsOptions()
                    .includeAuthorizedOperations(true)).all().get(WAIT_MS, TimeUnit.MILLISECONDS)
                    .get("sg-ops").authorizedOperations()).isEqualTo(readAndDescribe);
        }
        // ConsumerGroupDescribe checks each group on its own, as DescribeGroups does.
        try (Admin b = Admin.create(props(bob))) {
            assertThat(catchThrowable(() -> b.describeConsumerGroups(List.of("cg-ops")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldCheckShareGroupConfigsOnTheGroup() throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "sg-config");
        grant(allow(ResourceType.GROUP, "sg-config", "alice", AclOperation.ALTER_CONFIGS));
        AlterConfigOp set = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                AlterConfigOp.OpType.SET);
        try (Admin a = Admin.create(props(alice)); Admin b = Admin.create(props(bob))) {
            a.incrementalAlterConfigs(Map.of(group, List.of(set))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            // DESCRIBE_CONFIGS is implied by ALTER_CONFIGS.
            assertThat(a.describeConfigs(List.of(group)).all().get(WAIT_MS, TimeUnit.MILLISECONDS).get(group)
                    .get("share.auto.offset.reset").value()).isEqualTo("earliest");
            assertThat(catchThrowable(() -> b.incrementalAlterConfigs(Map.of(group, List.of(set))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
            assertThat(catchThrowable(() -> b.describeConfigs(List.of(group)).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void shouldCheckTopicAdministration() throws Exception {
        grant(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "alice-", PatternType.PREFIXED),
                        new AccessControlEntry("User:alice", "*", AclOperation.ALL, AclPermissionType.ALLOW)));
        try (Admin a = Admin.create(props(alice)); Admin b = Admin.create(props(bob))) {
            a.createTopics(List.of(new NewTopic("alice-t", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(catchThrowable(() -> b.createTopics(List.of(new NewTopic("bob-t", 1, (short) 1))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(TopicAuthorizationException.class);
            assertThat(catchThrowable(() -> b.createPartitions(Map.of("alice-t",
                    org.apache.kafka.clients.admin.NewPartitions.increaseTo(2))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(TopicAuthorizationException.class);
            a.createPartitions(Map.of("alice-t", org.apache.kafka.clients.admin.NewPartitions.increaseTo(2))).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(a.listOffsets(Map.of(new TopicPartition("alice-t", 0), OffsetSpec.latest())).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS)).hasSize(1);
            assertThat(catchThrowable(() -> b.deleteTopics(List.of("alice-t")).all()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(TopicAuthorizationException.class);
            a.deleteTopics(List.of("alice-t")).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void shouldRefuseAclApisWithoutClusterRights() throws Exception {
        try (Admin b = Admin.create(props(bob))) {
            assertThat(catchThrowable(() -> b.describeAcls(AclBindingFilter.ANY).values()
                    .get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(
                            ClusterAuthorizationException.class);
            assertThat(catchThrowable(() -> b.createAcls(List.of(allow(ResourceType.TOPIC, "x", "bob",
                    AclOperation.ALL))).all().get(WAIT_MS, TimeUnit.MILLISECONDS))).hasCauseInstanceOf(
                            ClusterAuthorizationException.class);
        }
    }

    @Test
    void shouldAddListAndRemoveAclsWithKafkaAcls() throws Exception {
        Path config = dir.resolve("admin-client.properties");
        StringBuilder sb = new StringBuilder();
        admin.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(config, sb.toString(), StandardCharsets.UTF_8);
        String[] common = {"--bootstrap-server", bootstrapServers(), "--command-config", config.toString()};
        KafkaTool.Result add = KafkaTool.run(AclCommand::main, concat(common, "--add", "--allow-principal",
                "User:carol", "--operation", "Read", "--topic", "tool-topic"));
        assertThat(add.exitCode()).isZero();
        AclBinding carolReads = allow(ResourceType.TOPIC, "tool-topic", "carol", AclOperation.READ);
        awaitEveryNode(List.of(carolReads), List.of());
        KafkaTool.Result list = KafkaTool.run(AclCommand::main, concat(common, "--list", "--topic", "tool-topic"));
        assertThat(list.exitCode()).isZero();
        assertThat(list.out()).contains("User:carol").contains("READ");
        KafkaTool.Result remove = KafkaTool.run(AclCommand::main, concat(common, "--remove", "--force",
                "--allow-principal", "User:carol", "--operation", "Read", "--topic", "tool-topic"));
        assertThat(remove.exitCode()).isZero();
        awaitEveryNode(List.of(), List.of(carolReads));
        KafkaTool.Result after = KafkaTool.run(AclCommand::main, concat(common, "--list", "--topic", "tool-topic"));
        assertThat(after.out()).doesNotContain("User:carol");
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
