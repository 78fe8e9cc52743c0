package io.pier.network;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Random bytes on a connection: the frame decoder, the request-header parser and whatever the
 * header routes to, on the real pipeline (see {@link FuzzedBroker}).
 *
 * <p>Input: one byte giving the chunk size the rest arrives in (0: all at once, else 1..255
 * bytes per read), then the byte stream. Kept inputs, in {@code FrameFuzzTestInputs/frames/}:
 * well-formed ApiVersions, Metadata and Produce frames, pipelined frames, and the framing attacks
 * of reliability.md §7 (sizes negative, INT_MAX or over the limit, a truncated frame, a client_id
 * length of -2, an unknown API key).
 */
class FrameFuzzTest {
    private static FuzzedBroker broker;
    private static int inputs;

    @BeforeAll
    static void start() throws Exception {
        broker = new FuzzedBroker();
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /**
     * Invariant: each read leaves the connection answered, closed, or waiting for the rest of a
     * frame; nothing is thrown out of the pipeline; the broker allocates a small multiple of the
     * bytes it received, never what an unread frame's size prefix claims (CVE-2022-34917); every
     * response frame is as long as its size prefix; no handler fails with other than a Kafka error;
     * and the broker keeps serving other connections.
     */
    @FuzzTest(maxDuration = "60s")
    void frames(byte[] input) throws Exception {
        if (input.length == 0) {
            return;
        }
        broker.assertAllocationBounded("a byte stream", () -> {
            broker.feed(input);
            return input.length;
        });
        broker.assertNoHandlerFailed("frames " + Arrays.toString(Arrays.copyOf(input, Math.min(input.length, 32))));
        if (++inputs % 64 == 1) {
            broker.assertServes();
        }
        broker = broker.renewIfCrowded();
    }
}
