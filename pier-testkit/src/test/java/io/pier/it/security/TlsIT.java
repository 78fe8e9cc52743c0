package io.pier.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.server.Pier;
import io.pier.testkit.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
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
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS listeners with the stock Kafka clients: produce, consume with a group, share-consume and
 * Admin over SSL, a plaintext listener beside it, Metadata per listener, client certificates
 * required, and clients speaking the wrong protocol on a port.
 */
class TlsIT {
    private static final long WAIT_MS = 30_000;
    private static Path dir;
    private static TestCertificates certs;
    /** PLAINTEXT and SSL listeners; client certificates requested, not required. */
    private static Pier both;
    /** One listener called CLIENTS, mapped to SSL, requiring a client certificate. */
    private static Pier mutual;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("pier-tls-");
        certs = TestCertificates.create(dir.resolve("certs"));
        both = Pier.builder().configs(certs.serverSettings())
                .config("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0")
                .config("listener.name.ssl.ssl.client.auth", "requested")
                .start();
        mutual = Pier.builder().configs(certs.serverSettings())
                .config("listeners", "CLIENTS://127.0.0.1:0")
                .config("listener.security.protocol.map", "CLIENTS:SSL")
                .config("listener.name.clients.ssl.client.auth", "required")
                .config("ssl.client.auth", "none") // the listener's own setting wins
                .start();
    }

    @AfterAll
    static void stop() throws IOException {
        for (Pier p : new Pier[] {both, mutual}) {
            if (p != null) {
                p.close();
            }
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void shouldProduceConsumeAndShareConsumeLargeRecordsOverTls() throws Exception {
        String ssl = both.bootstrapServers("SSL");
        Map<String, Object> tls = certs.clientSettings(false);
        try (Admin admin = Admin.create(props(ssl, tls))) {
            admin.createTopics(List.of(new NewTopic("tls-topic", 2, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "tls-share"),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        // Records from 10 bytes to 300 KB: fetch responses well past the size sent zero-copy on plaintext.
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            byte[] value = new byte[i % 3 == 0 ? 300_000 : 10 + i];
            Arrays.fill(value, (byte) i);
            sent.add(value);
        }
        Map<String, Object> producerProps = props(ssl, tls);
        producerProps.put("key.serializer", ByteArraySerializer.class.getName());
        producerProps.put("value.serializer", ByteArraySerializer.class.getName());
        producerProps.put("max.request.size", "2000000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            List<Future<?>> acks = new ArrayList<>();
            for (int i = 0; i < sent.size(); i++) {
                acks.add(producer.send(new ProducerRecord<>("tls-topic", i % 2, null, sent.get(i))));
            }
            for (Future<?> f : acks) {
                f.get(WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
        Map<String, Object> consumerProps = props(ssl, tls);
        consumerProps.put("group.id", "tls-group");
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("max.partition.fetch.bytes", "8000000"); // multi-megabyte fetch responses
        consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(List.of("tls-topic"));
            List<byte[]> got = Polls.values(consumer::poll, sent.size(), WAIT_MS);
            assertThat(got).usingElementComparator(Arrays::compare).containsExactlyInAnyOrderElementsOf(sent);
            consumer.commitSync(Duration.ofMillis(WAIT_MS));
        }
        Map<String, Object> shareProps = props(ssl, tls);
        shareProps.put("group.id", "tls-share");
        shareProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
        shareProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
        try (KafkaShareConsumer<byte[], byte[]> share = new KafkaShareConsumer<>(shareProps)) {
            share.subscribe(List.of("tls-topic"));
            List<byte[]> got = Polls.values(share::poll, sent.size(), WAIT_MS);
            assertThat(got).usingElementComparator(Arrays::compare).containsExactlyInAnyOrderElementsOf(sent);
            share.commitSync(Duration.ofMillis(WAIT_MS));
        }
    }

    @Test
    void shouldAdvertiseTheListenerTheClientConnectedThrough() throws Exception {
        String ssl = both.bootstrapServers("SSL");
        String plain = both.bootstrapServers("PLAINTEXT");
        assertThat(ssl).isNotEqualTo(plain);
        // What the start-up line prints: every listener, so a client of the second one knows where to go.
        assertThat(both.listeners()).isEqualTo("PLAINTEXT://" + plain + ",SSL://" + ssl);
        try (Admin overTls = Admin.create(props(ssl, certs.clientSettings(false)));
                Admin overPlain = Admin.create(props(plain, Map.of()))) {
            assertThat(addresses(overTls)).containsExactly(ssl);
            assertThat(addresses(overPlain)).containsExactly(plain);
            overPlain.createTopics(List.of(new NewTopic("tls-plain", 1, (short) 1))).all().get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertThat(overTls.listTopics().names().get(WAIT_MS, TimeUnit.MILLISECONDS)).contains("tls-plain");
        }
    }

    @Test
    void shouldRefuseAClientWithoutACertificateWhenRequired() throws Exception {
        String bootstrap = mutual.bootstrapServers("CLIENTS");
        Map<String, Object> noCert = props(bootstrap, certs.clientSettings(false));
        noCert.put("default.api.timeout.ms", "10000");
        noCert.put("request.timeout.ms", "5000");
        try (Admin admin = Admin.create(noCert)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SslAuthenticationException.class);
        }
        try (Admin admin = Admin.create(props(bootstrap, certs.clientSettings(true)))) {
            assertThat(addresses(admin)).containsExactly(bootstrap);
        }
    }

    @Test
    void shouldCloseAPlaintextClientOnTheTlsPortAndKeepServingOthers() throws Exception {
        String ssl = both.bootstrapServers("SSL");
        InetSocketAddress address = address(ssl);
        try (Socket socket = new Socket()) {
            socket.connect(address, (int) WAIT_MS);
            socket.setSoTimeout((int) WAIT_MS);
            // An ApiVersions v3 request frame, as a plaintext client opens with.
            byte[] frame = {0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 't', 'e', 's', 't', 0, 2, 'x', 2, '1', 0};
            socket.getOutputStream().write(frame);
            socket.getOutputStream().flush();
            assertThat(readUntilClosed(socket.getInputStream())).isTrue();
        }
        // The same with the real client: it does not get an answer, and gives up in time.
        Map<String, Object> plainOnTls = props(ssl, Map.of());
        plainOnTls.put("default.api.timeout.ms", "3000");
        plainOnTls.put("request.timeout.ms", "2000");
        try (Admin admin = Admin.create(plainOnTls)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class);
        }
        try (Admin admin = Admin.create(props(ssl, certs.clientSettings(false)))) {
            assertThat(addresses(admin)).containsExactly(ssl);
        }
    }

    @Test
    void shouldCloseATlsClientOnThePlaintextPortAndKeepServingOthers() throws Exception {
        String plain = both.bootstrapServers("PLAINTEXT");
        Map<String, Object> tlsOnPlain = props(plain, certs.clientSettings(false));
        tlsOnPlain.put("default.api.timeout.ms", "3000");
        tlsOnPlain.put("request.timeout.ms", "2000");
        try (Admin admin = Admin.create(tlsOnPlain)) {
            assertThatThrownBy(() -> admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class);
        }
        try (Admin admin = Admin.create(props(plain, Map.of()))) {
            assertThat(addresses(admin)).containsExactly(plain);
        }
    }

    @Test
    void shouldServeAPemKeyStoreGivenInline() throws Exception {
        // Given the server's key and chain, and the authority, as PEM text
        KeyStore server = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certs.serverKeyStore())) {
            server.load(in, certs.password().toCharArray());
        }
        Key key = server.getKey("server", certs.password().toCharArray());
        StringBuilder chain = new StringBuilder();
        for (Certificate c : server.getCertificateChain("server")) {
            chain.append(pem("CERTIFICATE", c.getEncoded()));
        }
        String authority = pem("CERTIFICATE", server.getCertificate("ca").getEncoded());

        // When a broker serves them on its SSL listener
        try (Pier pem = Pier.builder()
                .config("listeners", "SSL://127.0.0.1:0")
                .config("ssl.keystore.type", "PEM")
                .config("ssl.keystore.certificate.chain", chain.toString())
                .config("ssl.keystore.key", pem("PRIVATE KEY", key.getEncoded()))
                .config("ssl.truststore.type", "PEM")
                .config("ssl.truststore.certificates", authority)
                .config("ssl.client.auth", "required")
                .start()) {
            // Then a client with a certificate signed by the authority is served
            String bootstrap = pem.bootstrapServers("SSL");
            try (Admin admin = Admin.create(props(bootstrap, certs.clientSettings(true)))) {
                assertThat(addresses(admin)).containsExactly(bootstrap);
            }
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static boolean readUntilClosed(InputStream in) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        byte[] buf = new byte[4096];
        while (System.nanoTime() < deadline) {
            try {
                if (in.read(buf) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset by the broker: closed as well
            }
        }
        return false;
    }

    private static List<String> addresses(Admin admin) throws Exception {
        List<String> out = new ArrayList<>();
        for (Node n : admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS)) {
            out.add(n.host() + ":" + n.port());
        }
        return out;
    }

    private static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    private static Map<String, Object> props(String bootstrap, Map<String, Object> security) {
        Map<String, Object> p = new HashMap<>(security);
        p.put("bootstrap.servers", bootstrap);
        return p;
    }

}
