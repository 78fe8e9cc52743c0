package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ChildBroker;
import io.pier.it.admin.KafkaTool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.AclCommand;
import org.apache.kafka.tools.ConfigCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code pier start --config server.properties} with the file a Kafka 4.4 combined-mode broker
 * takes for SASL and ACLs (its controller settings are read past): an admin from the PLAIN JAAS
 * entries creates a SCRAM user with {@code kafka-configs} and grants and revokes its rights with
 * {@code kafka-acls}; the user, logged in with SCRAM-SHA-256, can produce only while granted.
 */
class SecurityConfigFileIT {
    private static final long WAIT_MS = 30_000;
    private static Path dir;
    private static ChildBroker broker;
    private static String bootstrap;
    private static Path adminConfig;

    /** The server.properties; Kafka 4.4 starts on it too once formatted with {@code kafka-storage format}. */
    static String serverProperties(int port, int controllerPort, Path logDirs) {
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.bootstrap.servers=127.0.0.1:" + controllerPort,
                "controller.listener.names=CONTROLLER",
                "listeners=SASL_PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=SASL_PLAINTEXT://127.0.0.1:" + port,
                "listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=SASL_PLAINTEXT",
                "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
                "sasl.mechanism.inter.broker.protocol=PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config="
                        + "org.apache.kafka.common.security.plain.PlainLoginModule required "
                        + "username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\";",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config="
                        + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                // Kafka's own controller connects over PLAINTEXT as ANONYMOUS; Pier serves no controller listener.
                "super.users=User:admin;User:ANONYMOUS",
                "allow.everyone.if.no.acl.found=false",
                "log.dirs=" + logDirs,
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "");
    }

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("pier-secconf-");
        int port = ChildBroker.freeLoopbackPort();
        Path config = dir.resolve("server.properties");
        Files.writeString(config, serverProperties(port, ChildBroker.freeLoopbackPort(), dir.resolve("data")),
                StandardCharsets.UTF_8);
        Files.createDirectories(dir.resolve("logs"));
        broker = ChildBroker.withConfigFile(config, port, dir.resolve("logs"));
        broker.start(1);
        bootstrap = broker.bootstrapServers();
        adminConfig = dir.resolve("admin.properties");
        Files.writeString(adminConfig, String.join("\n", "security.protocol=SASL_PLAINTEXT",
                "sasl.mechanism=PLAIN", "sasl.jaas.config=" + jaas("plain.PlainLoginModule", "admin", "admin-secret"),
                ""), StandardCharsets.UTF_8);
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
    }

    private static String jaas(String module, String user, String password) {
        return "org.apache.kafka.common.security." + module + " required username=\"" + user
                + "\" password=\"" + password + "\";";
    }

    private static Map<String, Object> scram(String user, String password) {
        return Map.of("bootstrap.servers", bootstrap, "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", jaas("scram.ScramLoginModule", user, password));
    }

    private static KafkaTool.Result tool(KafkaTool.Main main, String... args) throws Exception {
        String[] all = Stream.concat(Stream.of("--bootstrap-server", bootstrap, "--command-config",
                adminConfig.toString()), Stream.of(args)).toArray(String[]::new);
        return KafkaTool.run(main, all);
    }

    /** Produces one record as {@code who}; the failure's cause if refused. */
    private static Throwable produce(Map<String, Object> who, String topic) {
        Map<String, Object> p = new java.util.HashMap<>(who);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("max.block.ms", "10000");
        p.put("delivery.timeout.ms", "15000");
        p.put("request.timeout.ms", "10000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, "v")).get(WAIT_MS, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    @Test
    void shouldManageScramUsersAndAclsWithKafkaToolsOnTheConfigFile() throws Exception {
        KafkaTool.Result added = tool(ConfigCommand::main, "--alter", "--add-config",
                "SCRAM-SHA-256=[iterations=8192,password=alice-secret]", "--entity-type", "users",
                "--entity-name", "alice");
        assertThat(added.exitCode()).as(added.err()).isZero();
        KafkaTool.Result described = tool(ConfigCommand::main, "--describe", "--entity-type", "users",
                "--entity-name", "alice");
        assertThat(described.out()).contains("SCRAM-SHA-256=iterations=8192");

        try (Admin a = Admin.create(Map.of("bootstrap.servers", bootstrap, "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "PLAIN", "sasl.jaas.config", jaas("plain.PlainLoginModule", "admin", "admin-secret")))) {
            a.createTopics(List.of(new NewTopic("cfg-topic", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        Map<String, Object> alice = scram("alice", "alice-secret");
        assertThat(produce(alice, "cfg-topic")).as("no ACL yet").isInstanceOf(TopicAuthorizationException.class);

        KafkaTool.Result granted = tool(AclCommand::main, "--add", "--allow-principal", "User:alice",
                "--operation", "Write", "--operation", "Describe", "--topic", "cfg-topic");
        assertThat(granted.exitCode()).as(granted.err()).isZero();
        KafkaTool.Result listed = tool(AclCommand::main, "--list", "--topic", "cfg-topic");
        assertThat(listed.out()).contains("principal=User:alice").contains("operation=WRITE");
        assertThat(produce(alice, "cfg-topic")).as("granted").isNull();

        KafkaTool.Result revoked = tool(AclCommand::main, "--remove", "--force", "--allow-principal", "User:alice",
                "--operation", "Write", "--operation", "Describe", "--topic", "cfg-topic");
        assertThat(revoked.exitCode()).as(revoked.err()).isZero();
        assertThat(produce(alice, "cfg-topic")).as("revoked").isInstanceOf(TopicAuthorizationException.class);

        assertThat(produce(scram("alice", "wrong"), "cfg-topic")).isInstanceOf(SaslAuthenticationException.class);
        broker.assertAlive();
    }
}
