package io.pier.it.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import io.pier.testkit.PierExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The console over plain HTTP, no browser: it follows the broker's ACLs for its principal
 * ({@code pier.console.principal}), answers only GET and HEAD, leaves {@code /metrics} as it was,
 * and is off with the metrics.
 */
@Timeout(90)
class ConsoleAccessIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String VIEWER = "User:viewer";

    /** ACLs on; the test's clients (PLAINTEXT, User:ANONYMOUS) are super users, the console is User:viewer. */
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("pier.metrics.snapshot.interval.ms", "100",
            "pier.console.sample.interval.ms", "200", "authorizer.class.name", "pier",
            "super.users", "User:ANONYMOUS", "pier.console.principal", VIEWER);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    private HttpResponse<String> send(String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PIER.pier().metricsPort() + path))
                .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody()).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static AclBinding allowDescribe(ResourceType type, String name) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry(VIEWER, "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW));
    }

    /**
     * Given two topics and two share groups, the console's principal allowed to DESCRIBE one of
     * each: the overview lists only that topic and no request rates (no DESCRIBE on the cluster),
     * the share groups page only that group, and the other group's page is not found, like a
     * group that does not exist.
     */
    @Test
    void shouldShowOnlyWhatTheConsolePrincipalMayDescribe() throws Exception {
        clients.createTopic("seen-topic", 1);
        clients.createTopic("unseen-topic", 1);
        try (Admin admin = clients.admin()) {
            admin.createAcls(List.of(allowDescribe(ResourceType.TOPIC, "seen-topic"),
                    allowDescribe(ResourceType.GROUP, "seen-group"))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaShareConsumer<String, String> seen = clients.consumer("seen-group", "implicit");
                KafkaShareConsumer<String, String> unseen = clients.consumer("unseen-group", "implicit")) {
            seen.subscribe(Set.of("seen-topic"));
            unseen.subscribe(Set.of("unseen-topic"));
            await().atMost(WAIT).untilAsserted(() -> {
                seen.poll(Duration.ofMillis(50));
                unseen.poll(Duration.ofMillis(50));
                String groups = send("GET", "/share-groups").body();
                assertThat(groups).contains("data-key=\"seen-group\"").doesNotContain("unseen-group");
            });
            String overview = send("GET", "/").body();
            assertThat(overview).contains("data-key=\"seen-topic\"").doesNotContain("unseen-topic")
                    .contains("Request rates need DESCRIBE on the cluster").contains("as User:viewer");
            assertThat(send("GET", "/share-group?id=seen-group").statusCode()).isEqualTo(200);
            HttpResponse<String> unseenPage = send("GET", "/share-group?id=unseen-group");
            assertThat(unseenPage.statusCode()).isEqualTo(404);
            assertThat(unseenPage.body()).doesNotContain("data-key");
            assertThat(send("GET", "/share-group?id=no-such-group").statusCode()).isEqualTo(404);
        }
    }

    /** Only GET and HEAD: anything else is 405 with an Allow header; /metrics is the Prometheus text as before. */
    @Test
    void shouldBeReadOnlyAndKeepMetricsAsTheyWere() throws Exception {
        for (String method : List.of("POST", "PUT", "DELETE", "PATCH")) {
            HttpResponse<String> r = send(method, "/");
            assertThat(r.statusCode()).as(method).isEqualTo(405);
            assertThat(r.headers().firstValue("Allow")).as(method).hasValue("GET, HEAD");
        }
        HttpResponse<String> head = send("HEAD", "/share-groups");
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        HttpResponse<String> page = send("GET", "/");
        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
                csp -> assertThat(csp).contains("default-src 'none'").contains("script-src 'self'"));
        HttpResponse<String> metrics = send("GET", "/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type")).hasValueSatisfying(
                t -> assertThat(t).startsWith("text/plain"));
        assertThat(metrics.body()).contains("# TYPE pier_share_lag gauge").doesNotContain("<html");
        assertThat(send("GET", "/no-such-page").statusCode()).isEqualTo(404);
        assertThat(send("GET", "/console.js").body()).contains("data-refresh-ms");
    }

    /** pier.metrics.enable=false turns the console off with the metrics: no port is served. */
    @Test
    void shouldBeOffWhenMetricsAreOff() throws Exception {
        try (Pier pier = Pier.builder().config("pier.metrics.enable", "false").start()) {
            assertThat(pier.metricsPort()).isEqualTo(-1);
        }
    }
}
