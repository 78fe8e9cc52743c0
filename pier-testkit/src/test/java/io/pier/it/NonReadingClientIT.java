package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client that sends requests and never reads the answers. Once its answers fill the socket and
 * Netty's outbound buffer, Pier stops reading its requests, so the client's own writes stall
 * (the kernel buffers between the two fill up) instead of the broker reading on and keeping every
 * answer in memory; other clients are served meanwhile.
 */
@Timeout(120)
class NonReadingClientIT {
    /** Metadata for this many unknown topics: a request and its answer of about 25 KB each. */
    private static final int TOPICS_PER_REQUEST = 1_000;
    /** About 50 MB of requests: far more than loopback's socket buffers hold (a few MB each way). */
    private static final int REQUESTS = 2_000;
    /** Requests the broker may take before it stops reading, with the kernel buffers: about 12 MB. */
    private static final int MAX_WRITTEN_WHEN_STALLED = 1_000;
    private static final long STALL_MS = 2_000;

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    @Test
    void shouldStopReadingAClientThatNeverReadsItsAnswersAndServeOthersMeanwhile() throws Exception {
        byte[] frame = metadataFrame();
        AtomicInteger written = new AtomicInteger();
        String hostPort = PIER.bootstrapServers();
        // Small buffers on this side, so what is buffered is mostly the broker's doing.
        try (RawKafkaClient client = RawKafkaClient.connect(hostPort, RawKafkaClient.DEFAULT_TIMEOUT, 4096)) {
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < REQUESTS; i++) {
                        client.sendRaw(frame);
                        written.incrementAndGet();
                    }
                } catch (IOException e) {
                    // The socket was closed under a blocked write: the test is over.
                }
            }, "non-reading-client");
            writer.setDaemon(true);
            writer.start();

            boolean stalled = waitForStall(written, writer);
            assertThat(stalled).as("the client's writes stalled (%d of %d requests written)", written.get(), REQUESTS)
                    .isTrue();
            assertThat(written.get()).as("requests written before the broker stopped reading")
                    .isLessThan(MAX_WRITTEN_WHEN_STALLED);

            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, hostPort))) {
                assertThat(admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)).hasSize(1);
            }
            assertThat(written.get()).as("still stalled: nothing more was read from it").isLessThan(
                    MAX_WRITTEN_WHEN_STALLED);
        }
    }

    /** True once {@code written} has not moved for {@link #STALL_MS}; false if the writer finished. */
    private static boolean waitForStall(AtomicInteger written, Thread writer) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int last = -1;
        long unchangedSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            if (!writer.isAlive()) {
                return false;
            }
            int now = written.get();
            if (now != last) {
                last = now;
                unchangedSince = System.nanoTime();
            } else if (System.nanoTime() - unchangedSince > TimeUnit.MILLISECONDS.toNanos(STALL_MS)) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    private static byte[] metadataFrame() {
        List<MetadataRequestData.MetadataRequestTopic> topics = new ArrayList<>();
        for (int i = 0; i < TOPICS_PER_REQUEST; i++) {
            topics.add(new MetadataRequestData.MetadataRequestTopic().setName("no-such-topic-" + i));
        }
        MetadataRequestData data = new MetadataRequestData().setTopics(topics).setAllowAutoTopicCreation(false);
        MetadataRequest request = new MetadataRequest.Builder(data).build((short) 12);
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "non-reading", 1);
        ByteBuffer payload = request.serializeWithHeader(header);
        return RawKafkaClient.frame(payload);
    }
}
