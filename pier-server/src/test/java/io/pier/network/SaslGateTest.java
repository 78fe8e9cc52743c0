package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.protocol.ApiRouter;
import io.pier.protocol.SaslHandlers;
import io.pier.security.SaslAuthenticators;
import io.pier.security.ScramCredentialStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The SASL gate in a channel with no socket: what is served before and after authentication. */
class SaslGateTest {
    private EmbeddedChannel channel;
    private int correlationId;

    @BeforeEach
    void start() throws Exception {
        ApiRouter router = new ApiRouter();
        router.register(ApiKeys.API_VERSIONS, 0, 3,
                r -> CompletableFuture.completedFuture(router.apiVersionsResponse(Errors.NONE)))
                .register(ApiKeys.METADATA, 0, 12,
                        r -> CompletableFuture.completedFuture(new MetadataResponse(new MetadataResponseData(), r.version())))
                .register(ApiKeys.SASL_HANDSHAKE, 1, 1, SaslHandlers::handshake)
                .register(ApiKeys.SASL_AUTHENTICATE, 0, 2, SaslHandlers::authenticate);
        SaslAuthenticators sasl = new SaslAuthenticators(List.of("PLAIN"), Map.of("alice", "alice-secret"),
                ScramCredentialStore.open(null), 0, 524288);
        channel = HandDrivenPipeline.connection(40_000, 1 << 24,
                new RequestChannelHandler(router, "SASL_PLAINTEXT", null, null, sasl, 1 << 24,
                        RequestBytesBudget.unlimited()));
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
    }

    private RequestHeader send(AbstractRequest request) {
        return HandDrivenPipeline.send(channel, request, "embedded", ++correlationId);
    }

    private AbstractResponse next(RequestHeader header) {
        channel.runPendingTasks();
        return HandDrivenPipeline.readResponse(channel, header);
    }

    private static MetadataRequest bigMetadata() {
        List<MetadataRequestData.MetadataRequestTopic> topics = new ArrayList<>();
        for (int i = 0; i < 30_000; i++) {
            topics.add(new MetadataRequestData.MetadataRequestTopic().setName("topic-with-a-long-name-" + i));
        }
        return new MetadataRequest(new MetadataRequestData().setTopics(topics), (short) 12);
    }

    private SaslAuthenticateResponse login(String password) {
        SaslHandshakeResponse handshake = (SaslHandshakeResponse) next(send(new SaslHandshakeRequest(
                new SaslHandshakeRequestData().setMechanism("PLAIN"), (short) 1)));
        assertThat(handshake.error()).isEqualTo(Errors.NONE);
        return (SaslAuthenticateResponse) next(send(new SaslAuthenticateRequest(new SaslAuthenticateRequestData()
                .setAuthBytes(("\0alice\0" + password).getBytes(StandardCharsets.UTF_8)), (short) 2)));
    }

    @Test
    void shouldServeApiVersionsButCloseOnOtherRequestsBeforeAuthentication() {
        ApiVersionsResponse versions = (ApiVersionsResponse) next(send(new ApiVersionsRequest(
                new ApiVersionsRequestData(), (short) 3)));
        assertThat(versions.data().apiKeys().find(ApiKeys.SASL_HANDSHAKE.id)).isNotNull();
        assertThat(channel.isOpen()).isTrue();

        send(new MetadataRequest(new MetadataRequestData().setTopics(null), (short) 12));
        channel.runPendingTasks();

        assertThat(channel.isOpen()).isFalse();
        assertThat((Object) channel.readOutbound()).isNull();
    }

    @Test
    void shouldRefuseFramesOver512KiBUntilAuthenticated() {
        send(bigMetadata());
        channel.runPendingTasks();

        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void shouldLiftTheFrameLimitAndServeEverythingOnceAuthenticated() {
        assertThat(login("alice-secret").error()).isEqualTo(Errors.NONE);

        assertThat(next(send(bigMetadata()))).isInstanceOf(MetadataResponse.class);
        SaslHandshakeResponse again = (SaslHandshakeResponse) next(send(new SaslHandshakeRequest(
                new SaslHandshakeRequestData().setMechanism("PLAIN"), (short) 1)));
        assertThat(again.error()).isEqualTo(Errors.ILLEGAL_SASL_STATE); // no re-authentication configured
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void shouldAnswerAFailedLoginThenClose() {
        SaslAuthenticateResponse failed = login("wrong");

        assertThat(failed.error()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED);
        assertThat(failed.errorMessage()).doesNotContain("password").contains("invalid credentials");
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void shouldRefuseAnUnknownMechanismListingTheEnabledOnesThenClose() {
        SaslHandshakeResponse r = (SaslHandshakeResponse) next(send(new SaslHandshakeRequest(
                new SaslHandshakeRequestData().setMechanism("GSSAPI"), (short) 1)));

        assertThat(r.error()).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM);
        assertThat(r.data().mechanisms()).containsExactly("PLAIN");
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
    }
}
