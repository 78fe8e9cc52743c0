package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.RawKafkaClient.Closed;
import io.pier.it.RawKafkaClient.Received;
import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code connections.max.idle.ms}: a connection that sends nothing for that long is closed. */
@Timeout(60)
class IdleConnectionIT {
    private static final long IDLE_MS = 1000;
    /** Generous against a loaded machine, still far below the 10-minute default. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(8);

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("connections.max.idle.ms", Long.toString(IDLE_MS));

    @Test
    void shouldCloseConnectionThatNeverSendsAnything() throws IOException {
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers(), READ_TIMEOUT)) {
            long start = System.nanoTime();
            Received received = client.receive();
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(received).isInstanceOf(Closed.class);
            assertThat(waitedMs).isGreaterThanOrEqualTo(IDLE_MS / 2);
        }
    }

    @Test
    void shouldCloseConnectionStuckInsideAPartialFrame() throws IOException {
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers(), READ_TIMEOUT)) {
            // Announce 100 bytes, send 10, then stall (slowloris).
            byte[] partial = ByteBuffer.allocate(14).putInt(100).array();
            client.sendRaw(partial);
            assertThat(client.receive()).isInstanceOf(Closed.class);
        }
    }

    @Test
    void shouldServeAConnectionThatIsUsedBeforeItGoesIdle() throws IOException {
        try (RawKafkaClient client = RawKafkaClient.connect(PIER.bootstrapServers(), READ_TIMEOUT)) {
            RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "idle-test", 1);
            client.send(header, new ApiVersionsRequest.Builder((short) 3).build((short) 3));
            ApiVersionsResponse response = (ApiVersionsResponse) client.receiveResponse(header);
            assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.NONE);
            assertThat(client.receive()).isInstanceOf(Closed.class);
        }
    }
}
