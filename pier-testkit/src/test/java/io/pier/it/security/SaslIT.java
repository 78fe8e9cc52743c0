package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.it.admin.KafkaTool;
import io.pier.server.Pier;
import io.pier.testkit.TestCertificates;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedSaslMechanismException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.tools.ConfigCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SASL listeners with the stock Kafka clients: produce, consume with a group, share-consume and
 * Admin over SASL_PLAINTEXT with PLAIN and both SCRAM mechanisms and over SASL_SSL; failed logins,
 * a mechanism the listener does not enable, requests and oversized frames before authentication,
 * and SCRAM users added with kafka-configs that survive a restart.
 */
class SaslIT {
    private static final long WAIT_MS = 30_000;
    private static final String PLAIN_SERVER_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule "
            + "required username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" "
            + "user_alice=\"alice-secret\";";
    private static Path dir;
    private static TestCertificates certs;
    /** SASL_PLAINTEXT with PLAIN and both SCRAMs; SASL_SSL with SCRAM-SHA-512 only. */
    private static Pier pier;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("pier-sasl-");
        certs = TestCertificates.create(dir.resolve("certs"));
        pier = Pier.builder().configs(saslSettings()).configs(certs.serverSettings())
                .config("listeners", "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0")
                .config("listener.name.sasl_ssl.sasl.enabled.mechanisms", "SCRAM-SHA-512")
                .start();
    }

    private static Map<String, String> saslSettings() {
        Map<String, String> s = new HashMap<>();
        s.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512");
        s.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_SERVER_JAAS);
        s.put("listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        s.put("pier.sasl.scram.bootstrap", "SCRAM-SHA-256=[name=admin,password=admin-secret],"
                + "SCRAM-SHA-512=[name=admin,password=admin-secret]");
        return s;
    }

    @AfterAll
    static void stop() throws IOException {
        if (pier != null) {
            pier.close();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
    }

    private static Map<String, Object> client(String bootstrap, String protocol, String mechanism, String user,
            String password) {
        Map<String, Object> p = new HashMap<>();
        if (protocol.equals("SASL_SSL")) {
            p.putAll(certs.clientSettings(false));
        }
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", protocol);
        p.put("sasl.mechanism", mechanism);
        String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
        p.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    @ParameterizedTest
    @CsvSource({"SASL_PLAINTEXT, PLAIN, alice, alice-secret", "SASL_PLAINTEXT, SCRAM-SHA-256, admin, admin-secret",
            "SASL_PLAINTEXT, SCRAM-SHA-512, admin, admin-secret", "SASL_SSL, SCRAM-SHA-512, admin, admin-secret"})
    void shouldProduceConsumeShareConsumeAndAdministerOverSasl(String protocol, String mechanism, String user,
            String password) throws Exception {
        String bootstrap = pier.bootstrapServers(protocol);
        String topic = "sasl-" + protocol + "-" + mechanism;
        Map<String, Object> base = client(bootstrap, protocol, mechanism, user, password);
        try (Admin admin = Admin.create(base)) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, topic + "-share"),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(admin.listTopics().names().get(WAIT_MS, TimeUnit.MILLISECONDS)).contains(topic);
        }
        List<String> sent = new ArrayList<>();
        Map<String, Object> producerProps = new HashMap<>(base);
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            List<Future<?>> acks = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                sent.add("v" + i);
                acks.add(producer.send(new ProducerRecord<>(topic, i % 2, null, "v" + i)));
            }
            // Past sasl.server.max.receive.size (512 KiB): the limit is lifted once authenticated.
            String large = "x".repeat(700_000);
            sent.add(large);
            acks.add(producer.send(new ProducerRecord<>(topic, 0, null, large)));
            for (Future<?> f : acks) {
                f.get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
        Map<String, Object> consumerProps = new HashMap<>(base);
        consumerProps.put("group.id", topic + "-group");
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("key.deserializer", StringDeserializer.class.getName());
        consumerProps.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(List.of(topic));
            assertThat(Polls.values(consumer::poll, sent.size(), WAIT_MS)).containsExactlyInAnyOrderElementsOf(sent);
            consumer.commitSync(Duration.ofMillis(WAIT_MS));
        }
        Map<String, Object> shareProps = new HashMap<>(base);
        shareProps.put("group.id", topic + "-share");
        shareProps.put("key.deserializer", StringDeserializer.class.getName());
        shareProps.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> share = new KafkaShareConsumer<>(shareProps)) {
            share.subscribe(List.of(topic));
            assertThat(Polls.values(share::poll, sent.size(), WAIT_MS)).containsExactlyInAnyOrderElementsOf(sent);
            share.commitSync(Duration.ofMillis(WAIT_MS));
        }
    }

    @ParameterizedTest
    @CsvSource({"PLAIN, alice, wrong", "PLAIN, mallory, alice-secret", "SCRAM-SHA-256, admin, wrong",
            "SCRAM-SHA-512, nobody, admin-secret"})
    void shouldFailAuthenticationWithWrongCredentials(String mechanism, String user, String password) {
        Map<String, Object> props = client(pier.bootstrapServers("SASL_PLAINTEXT"), "SASL_PLAINTEXT", mechanism,
                user, password);
        long start = System.nanoTime();
        try (Admin admin = Admin.create(props)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SaslAuthenticationException.class)
                    .hasMessageContaining("invalid credentials").hasMessageNotContaining(password);
        }
        // connection.failed.authentication.delay.ms (100 by default) before the answer.
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void shouldRefuseAMechanismTheListenerDoesNotEnable() {
        // SASL_SSL enables only SCRAM-SHA-512.
        Map<String, Object> props = client(pier.bootstrapServers("SASL_SSL"), "SASL_SSL", "PLAIN", "alice",
                "alice-secret");
        try (Admin admin = Admin.create(props)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(UnsupportedSaslMechanismException.class).hasMessageContaining("SCRAM-SHA-512");
        }
    }

    @Test
    void shouldServeApiVersionsButCloseOnMetadataBeforeAuthentication() throws Exception {
        try (Socket socket = connect(pier.bootstrapServers("SASL_PLAINTEXT"))) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            send(out, new ApiVersionsRequest(new ApiVersionsRequestData(), (short) 3), ApiKeys.API_VERSIONS, 1);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            assertThat(size).isPositive();
            in.readFully(new byte[size]);
            assertThat(in.readAllBytes().length).isZero(); // nothing more (SO_TIMEOUT below would throw)
        } catch (SocketTimeoutException expected) {
            // The response was read, and the connection stays open: what ApiVersions before SASL should do.
        }
        try (Socket socket = connect(pier.bootstrapServers("SASL_PLAINTEXT"))) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            send(out, new MetadataRequest(new MetadataRequestData().setTopics(null), (short) 12), ApiKeys.METADATA, 2);
            assertThat(readUntilClosed(socket.getInputStream())).as("closed without an answer").isEqualTo(0);
        }
        // SaslAuthenticate before SaslHandshake, and the legacy v0 handshake (raw tokens): closed too.
        try (Socket socket = connect(pier.bootstrapServers("SASL_PLAINTEXT"))) {
            send(new DataOutputStream(socket.getOutputStream()), new SaslAuthenticateRequest(
                    new SaslAuthenticateRequestData().setAuthBytes("\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8)),
                    (short) 2), ApiKeys.SASL_AUTHENTICATE, 1);
            assertThat(readUntilClosed(socket.getInputStream())).isEqualTo(0);
        }
        try (Socket socket = connect(pier.bootstrapServers("SASL_PLAINTEXT"))) {
            send(new DataOutputStream(socket.getOutputStream()), new SaslHandshakeRequest(
                    new SaslHandshakeRequestData().setMechanism("PLAIN"), (short) 0), ApiKeys.SASL_HANDSHAKE, 1);
            assertThat(readUntilClosed(socket.getInputStream())).isEqualTo(0);
        }
    }

    @Test
    void shouldCloseAHugeFramePrefixBeforeAuthenticationAndKeepServing() throws Exception {
        for (int size : new int[] {100 * 1024 * 1024, 512 * 1024 + 1}) {
            try (Socket socket = connect(pier.bootstrapServers("SASL_PLAINTEXT"))) {
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                out.writeInt(size);
                out.write(new byte[64]);
                out.flush();
                assertThat(readUntilClosed(socket.getInputStream())).isEqualTo(0);
            }
        }
        try (Admin admin = Admin.create(client(pier.bootstrapServers("SASL_PLAINTEXT"), "SASL_PLAINTEXT", "PLAIN",
                "alice", "alice-secret"))) {
            assertThat(admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS)).hasSize(1);
        }
    }

    @Test
    void shouldAddScramUsersWithKafkaConfigsThatLogInAndSurviveARestart() throws Exception {
        Path data = dir.resolve("restart-data");
        Path commandConfig = dir.resolve("admin.properties");
        Files.writeString(commandConfig, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                + "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"admin\" password=\"admin-secret\";\n", StandardCharsets.UTF_8);
        String bootstrap;
        try (Pier p = Pier.builder().dataDir(data).configs(saslSettings())
                .config("listeners", "SASL_PLAINTEXT://127.0.0.1:0").start()) {
            bootstrap = p.bootstrapServers("SASL_PLAINTEXT");
            KafkaTool.Result added = KafkaTool.run(ConfigCommand::main, "--bootstrap-server", bootstrap,
                    "--command-config", commandConfig.toString(), "--alter", "--entity-type", "users",
                    "--entity-name", "carol", "--add-config",
                    "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]");
            assertThat(added.exitCode()).isZero();
            KafkaTool.Result described = KafkaTool.run(ConfigCommand::main, "--bootstrap-server", bootstrap,
                    "--command-config", commandConfig.toString(), "--describe", "--entity-type", "users");
            assertThat(described.exitCode()).isZero();
            assertThat(described.out()).contains("carol").contains("SCRAM-SHA-256=iterations=8192")
                    .contains("SCRAM-SHA-512=iterations=4096").contains("admin");
            assertLogsIn(bootstrap, "SCRAM-SHA-256", "carol", "carol-secret");
            assertLogsIn(bootstrap, "SCRAM-SHA-512", "carol", "carol-secret");
        }
        assertThat(Files.readString(data.resolve("meta/scram-credentials"))).doesNotContain("carol-secret")
                .doesNotContain("admin-secret");
        try (Pier p = Pier.builder().dataDir(data).configs(saslSettings())
                .config("listeners", "SASL_PLAINTEXT://127.0.0.1:0").start()) {
            bootstrap = p.bootstrapServers("SASL_PLAINTEXT");
            assertLogsIn(bootstrap, "SCRAM-SHA-256", "carol", "carol-secret");
            KafkaTool.Result deleted = KafkaTool.run(ConfigCommand::main, "--bootstrap-server", bootstrap,
                    "--command-config", commandConfig.toString(), "--alter", "--entity-type", "users",
                    "--entity-name", "carol", "--delete-config", "SCRAM-SHA-256");
            assertThat(deleted.exitCode()).isZero();
            try (Admin admin = Admin.create(client(bootstrap, "SASL_PLAINTEXT", "SCRAM-SHA-256", "carol",
                    "carol-secret"))) {
                assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                        .cause().isInstanceOf(SaslAuthenticationException.class);
            }
            assertLogsIn(bootstrap, "SCRAM-SHA-512", "carol", "carol-secret");
        }
    }

    @Test
    void shouldEndAnExpiredSessionUnlessTheClientReauthenticates() throws Exception {
        try (Pier p = Pier.builder().configs(saslSettings()).config("listeners", "SASL_PLAINTEXT://127.0.0.1:0")
                .config("connections.max.reauth.ms", "1500").start()) {
            String bootstrap = p.bootstrapServers("SASL_PLAINTEXT");
            // A raw client: authenticated, told the lifetime, closed on its first request after it.
            try (Socket socket = connect(bootstrap)) {
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                DataInputStream in = new DataInputStream(socket.getInputStream());
                SaslAuthenticateResponse auth = plainLogin(out, in, "alice", "alice-secret", 1);
                assertThat(auth.error()).isEqualTo(Errors.NONE);
                assertThat(auth.sessionLifetimeMs()).isEqualTo(1500);
                send(out, metadata(), ApiKeys.METADATA, 3);
                assertThat(receive(in, ApiKeys.METADATA, (short) 12)).isInstanceOf(MetadataResponse.class);
                Thread.sleep(1700);
                // Re-authenticating on the connection starts a new session.
                assertThat(plainLogin(out, in, "alice", "alice-secret", 4).error()).isEqualTo(Errors.NONE);
                send(out, metadata(), ApiKeys.METADATA, 6);
                assertThat(receive(in, ApiKeys.METADATA, (short) 12)).isInstanceOf(MetadataResponse.class);
                Thread.sleep(1700);
                send(out, metadata(), ApiKeys.METADATA, 7);
                assertThat(readUntilClosed(in)).as("closed after the session expired").isEqualTo(0);
            }
            // Re-authenticating as someone else closes the connection.
            try (Socket socket = connect(bootstrap)) {
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                DataInputStream in = new DataInputStream(socket.getInputStream());
                assertThat(plainLogin(out, in, "alice", "alice-secret", 1).error()).isEqualTo(Errors.NONE);
                assertThat(plainLogin(out, in, "admin", "admin-secret", 3).error())
                        .isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
                assertThat(readUntilClosed(in)).isEqualTo(0);
            }
            // kafka-clients re-authenticate by themselves, and keep producing across several lifetimes.
            Map<String, Object> props = client(bootstrap, "SASL_PLAINTEXT", "SCRAM-SHA-512", "admin", "admin-secret");
            props.put("key.serializer", StringSerializer.class.getName());
            props.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < 20; i++) {
                    producer.send(new ProducerRecord<>("reauth", "v" + i)).get(WAIT_MS, TimeUnit.MILLISECONDS);
                    Thread.sleep(200);
                }
            }
        }
    }

    private static MetadataRequest metadata() {
        return new MetadataRequest(new MetadataRequestData().setTopics(null), (short) 12);
    }

    /** SaslHandshake v1 and SaslAuthenticate v2 with a PLAIN token, on correlation ids {@code id} and {@code id + 1}. */
    private static SaslAuthenticateResponse plainLogin(DataOutputStream out, DataInputStream in, String user,
            String password, int id) throws IOException {
        send(out, new SaslHandshakeRequest(new SaslHandshakeRequestData().setMechanism("PLAIN"), (short) 1),
                ApiKeys.SASL_HANDSHAKE, id);
        assertThat(((SaslHandshakeResponse) receive(in, ApiKeys.SASL_HANDSHAKE, (short) 1)).error())
                .isEqualTo(Errors.NONE);
        byte[] token = ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
        send(out, new SaslAuthenticateRequest(new SaslAuthenticateRequestData().setAuthBytes(token), (short) 2),
                ApiKeys.SASL_AUTHENTICATE, id + 1);
        return (SaslAuthenticateResponse) receive(in, ApiKeys.SASL_AUTHENTICATE, (short) 2);
    }

    private static AbstractResponse receive(DataInputStream in, ApiKeys key, short version) throws IOException {
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        ByteBuffer buf = ByteBuffer.wrap(frame);
        ResponseHeader.parse(buf, key.responseHeaderVersion(version));
        return AbstractResponse.parseResponse(key, new ByteBufferAccessor(buf), version);
    }

    private static void assertLogsIn(String bootstrap, String mechanism, String user, String password)
            throws Exception {
        try (Admin admin = Admin.create(client(bootstrap, "SASL_PLAINTEXT", mechanism, user, password))) {
            assertThat(admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS)).hasSize(1);
        }
    }

    private static Socket connect(String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))), 5_000);
        socket.setSoTimeout(2_000);
        return socket;
    }

    private static void send(DataOutputStream out, AbstractRequest request, ApiKeys key, int correlationId)
            throws IOException {
        ByteBuffer frame = request.serializeWithHeader(new RequestHeader(key, request.version(), "raw", correlationId));
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    /** Bytes read before the broker closed; -1 if it kept the connection open. */
    private static int readUntilClosed(InputStream in) throws IOException {
        int total = 0;
        byte[] buf = new byte[4096];
        while (true) {
            try {
                int n = in.read(buf);
                if (n < 0) {
                    return total;
                }
                total += n;
            } catch (SocketTimeoutException e) {
                return -1;
            } catch (IOException e) {
                return total; // reset by the broker: closed as well
            }
        }
    }

}
