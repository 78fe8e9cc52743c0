package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.it.RawKafkaClient.Closed;
import io.pier.it.RawKafkaClient.Frame;
import io.pier.it.RawKafkaClient.Received;
import io.pier.it.share.ScrapedMetrics;
import io.pier.server.Pier;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Kafka's connection limits with real sockets and kafka-clients: {@code max.connections.per.ip}
 * and its overrides, {@code max.connections} and a listener's own limit. Connections up to the
 * limit are served; one more is closed by the broker before it is served, the others go on
 * working; once one of them closes its slot is free again. A bad value stops the start.
 */
@Timeout(120)
class ConnectionLimitsIT {
    /** Generous against a loaded machine; a refused connection is closed long before. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration SLOT_FREED_WITHIN = Duration.ofSeconds(20);
    private static final long WAIT_MS = 30_000;

    private final List<RawKafkaClient> open = new ArrayList<>();
    private int correlationId;

    @AfterEach
    void closeClients() throws IOException {
        for (RawKafkaClient c : open) {
            c.close();
        }
    }

    @Test
    void shouldCloseAConnectionPastTheLimitOfItsAddressAndAdmitOneAfterAClose() throws Exception {
        try (Pier pier = Pier.builder().config("max.connections.per.ip", "3").start()) {
            String bootstrap = pier.bootstrapServers();
            List<RawKafkaClient> admitted = connectServed(bootstrap, 3);

            assertRefused(bootstrap);

            for (RawKafkaClient c : admitted) {
                assertServed(c); // the refusal closed only the new connection
            }
            assertThat(openConnections(pier, "PLAINTEXT")).as("the refused connection holds no slot").isEqualTo(3);
            admitted.get(0).close();
            await().atMost(SLOT_FREED_WITHIN).pollInterval(Duration.ofMillis(100))
                    .until(() -> openConnections(pier, "PLAINTEXT") == 2);
            await().atMost(SLOT_FREED_WITHIN).pollInterval(Duration.ofMillis(100))
                    .until(() -> tryServedConnection(bootstrap));
            assertRefused(bootstrap); // the freed slot is taken again
            assertThat(openConnections(pier, "PLAINTEXT")).isEqualTo(3);
        }
    }

    @Test
    void shouldLetAnOverrideRaiseTheLimitOfOneAddress() throws Exception {
        try (Pier pier = Pier.builder()
                .config("max.connections.per.ip", "1")
                .config("max.connections.per.ip.overrides", "127.0.0.1:4")
                .start()) {
            String bootstrap = pier.bootstrapServers();
            connectServed(bootstrap, 4);

            assertRefused(bootstrap);
        }
    }

    @Test
    void shouldRefuseEveryClientWithAPerIpLimitOfZeroUnlessAnOverrideAdmitsIt() throws Exception {
        try (Pier pier = Pier.builder()
                .config("max.connections.per.ip", "0")
                .config("max.connections.per.ip.overrides", "127.0.0.2:5")
                .start()) {
            assertRefused(pier.bootstrapServers());
        }
    }

    @Test
    void shouldCloseAConnectionPastTheBrokerWideLimitWhileAnAdminGoesOnBeingServed() throws Exception {
        int max = 4;
        try (Pier pier = Pier.builder().config("max.connections", Integer.toString(max)).start();
                Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()))) {
            String bootstrap = pier.bootstrapServers();
            assertThat(admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS)).hasSize(1);

            // The Admin holds one or two of the slots: fill the rest, then one more is refused.
            List<RawKafkaClient> admitted = new ArrayList<>();
            boolean refused = false;
            for (int i = 0; i < max && !refused; i++) {
                RawKafkaClient c = connect(bootstrap);
                Received r = apiVersions(c);
                if (r instanceof Frame) {
                    admitted.add(c);
                } else {
                    assertThat(r).isInstanceOf(Closed.class);
                    refused = true;
                }
            }
            assertThat(refused).as("a connection past max.connections=" + max + " is refused").isTrue();
            assertThat(admitted).hasSizeBetween(max - 2, max - 1);

            assertThat(admin.describeCluster().nodes().get(WAIT_MS, TimeUnit.MILLISECONDS)).hasSize(1);
            for (RawKafkaClient c : admitted) {
                assertServed(c);
            }
            admitted.get(0).close();
            await().atMost(SLOT_FREED_WITHIN).pollInterval(Duration.ofMillis(100))
                    .until(() -> tryServedConnection(bootstrap));
        }
    }

    @Test
    void shouldLimitAListenerWithoutLimitingTheOthers() throws Exception {
        try (Pier pier = Pier.builder()
                .config("listeners", "PLAINTEXT://127.0.0.1:0,LIMITED://127.0.0.1:0")
                .config("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,LIMITED:PLAINTEXT")
                .config("listener.name.limited.max.connections", "2")
                .start()) {
            String limited = pier.bootstrapServers("LIMITED");
            List<RawKafkaClient> admitted = connectServed(limited, 2);

            assertRefused(limited);

            connectServed(pier.bootstrapServers("PLAINTEXT"), 4);
            admitted.get(1).close();
            await().atMost(SLOT_FREED_WITHIN).pollInterval(Duration.ofMillis(100))
                    .until(() -> tryServedConnection(limited));
        }
    }

    @Test
    void shouldStopTheStartNamingTheSettingOfABadValue() {
        assertThatThrownBy(() -> Pier.builder().config("max.connections.per.ip", "-1").start())
                .isInstanceOf(ConfigException.class).hasMessageContaining("max.connections.per.ip");
        assertThatThrownBy(() -> Pier.builder().config("max.connections", "lots").start())
                .isInstanceOf(ConfigException.class).hasMessageContaining("max.connections");
        assertThatThrownBy(() -> Pier.builder().config("max.connections.per.ip.overrides", "127.0.0.1=5").start())
                .isInstanceOf(ConfigException.class).hasMessageContaining("max.connections.per.ip.overrides");
        assertThatThrownBy(() -> Pier.builder().config("max.connections.per.ip", "0").start())
                .isInstanceOf(ConfigException.class).hasMessageContaining("max.connections.per.ip.overrides");
    }

    /** What the metrics endpoint shows of the listener's connections. */
    private static double openConnections(Pier pier, String listener) throws IOException, InterruptedException {
        return ScrapedMetrics.scrape(pier.metricsPort()).value("pier_connections", "listener", listener);
    }

    /** {@code n} connections, each shown to be served (so each holds its slot) before the next opens. */
    private List<RawKafkaClient> connectServed(String bootstrap, int n) throws IOException {
        List<RawKafkaClient> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RawKafkaClient c = connect(bootstrap);
            assertServed(c);
            out.add(c);
        }
        return out;
    }

    /** A new connection is closed by the broker without an answer, within the read timeout. */
    private void assertRefused(String bootstrap) throws IOException {
        RawKafkaClient c = connect(bootstrap);
        assertThat(apiVersions(c)).isInstanceOf(Closed.class);
    }

    private void assertServed(RawKafkaClient c) throws IOException {
        Received r = apiVersions(c);
        assertThat(r).isInstanceOf(Frame.class);
    }

    /** One attempt: a new connection that is answered stays open (and holds a slot). */
    private boolean tryServedConnection(String bootstrap) throws IOException {
        RawKafkaClient c = connect(bootstrap);
        return apiVersions(c) instanceof Frame;
    }

    private RawKafkaClient connect(String bootstrap) throws IOException {
        RawKafkaClient c = RawKafkaClient.connect(bootstrap, READ_TIMEOUT);
        open.add(c);
        return c;
    }

    /** Sends ApiVersions; what came back: its answer (checked), or the close. */
    private Received apiVersions(RawKafkaClient c) throws IOException {
        RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "limits-test", ++correlationId);
        try {
            c.send(header, new ApiVersionsRequest.Builder((short) 3).build((short) 3));
        } catch (IOException e) {
            return new Closed("write failed: " + e.getMessage()); // closed by the broker before the write
        }
        Received r = c.receive();
        if (r instanceof Frame frame) {
            ApiVersionsResponse response = (ApiVersionsResponse) AbstractResponse.parseResponse(
                    frame.bytes().duplicate(), header);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.NONE);
        }
        return r;
    }
}
