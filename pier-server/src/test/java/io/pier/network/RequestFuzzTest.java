package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * One request of every API Pier serves, with a valid header and a fuzzed body, through the real
 * pipeline and handlers (see {@link FuzzedBroker}).
 *
 * <p>Input: the API key (int16; a key Pier does not serve picks one by index), a byte choosing
 * the version within the served range, then the body. Kept inputs, in {@code
 * RequestFuzzTestInputs/request/}: a default-valued body of each API at its lowest and highest
 * version, plus Produce, Metadata, CreateTopics, ShareFetch and ShareAcknowledge requests that
 * name the test's topic.
 */
class RequestFuzzTest {
    /** How far the clock moves so that a parked long poll (Fetch, ShareFetch) answers. */
    private static final long LONG_POLL_MS = 60_000;
    /** 16 bytes a body may carry where a topic id goes: replaced by the id of the test's topic. */
    static final byte[] TOPIC_ID_PLACEHOLDER = new byte[16];

    static {
        java.util.Arrays.fill(TOPIC_ID_PLACEHOLDER, (byte) 0x77);
    }

    private static FuzzedBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = new FuzzedBroker();
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /** The served API an input's first two bytes pick, as {key, min, max}. */
    static short[] api(List<short[]> served, short keyId) {
        for (short[] s : served) {
            if (s[0] == keyId) {
                return s;
            }
        }
        return served.get(Math.floorMod(keyId, served.size()));
    }

    /**
     * Invariant: the request is answered with a response kafka-clients can parse for that API
     * and version, or the connection is closed, or it waits on a long poll or rebalance (then
     * nothing is thrown either); no handler fails with other than a Kafka error; allocation stays
     * a small multiple of the request's size; and afterwards a new connection still gets
     * ApiVersions and Metadata answered (the bound: {@link FuzzedBroker#assertAllocationBounded}).
     */
    @FuzzTest(maxDuration = "60s")
    void request(byte[] input) throws Exception {
        if (input.length < 3) {
            return;
        }
        short[] api = api(broker.served, (short) (((input[0] & 0xff) << 8) | (input[1] & 0xff)));
        ApiKeys key = ApiKeys.forId(api[0]);
        short version = (short) (api[1] + (input[2] & 0xff) % (api[2] - api[1] + 1));
        broker.assertAllocationBounded(key + " v" + version, () -> send(key, version, input));
        broker.assertNoHandlerFailed(key + " v" + version);
        broker.assertServes();
        broker = broker.renewIfCrowded();
    }

    /** {@code body} with each {@link #TOPIC_ID_PLACEHOLDER} replaced by {@code id}. */
    static byte[] withTopicId(byte[] body, org.apache.kafka.common.Uuid id) {
        ByteBuffer b = ByteBuffer.wrap(body);
        for (int i = 0; i + 16 <= body.length; i++) {
            if (java.util.Arrays.equals(body, i, i + 16, TOPIC_ID_PLACEHOLDER, 0, 16)) {
                b.putLong(i, id.getMostSignificantBits()).putLong(i + 8, id.getLeastSignificantBits());
                i += 15;
            }
        }
        return body;
    }

    /** Sends the request on a new connection and checks what comes back; returns the frame's size. */
    private static int send(ApiKeys key, short version, byte[] input) {
        RequestHeader header = broker.header(key, version);
        ByteBuffer head = ByteBuffer.wrap(MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion())
                .buffer().array());
        int size = head.remaining() + input.length - 3;
        byte[] body = withTopicId(java.util.Arrays.copyOfRange(input, 3, input.length), broker.topicId);
        ByteBuf frame = Unpooled.buffer(4 + size).writeInt(size).writeBytes(head).writeBytes(body);
        EmbeddedChannel channel = broker.connect();
        try {
            channel.writeInbound(frame); // rethrows what reached the end of the pipeline unhandled
            broker.settle(channel);
            List<ByteBuffer> responses = FuzzedBroker.responses(channel);
            if (responses.isEmpty() && channel.isOpen()) {
                broker.broker.clock.advance(LONG_POLL_MS);
                broker.settle(channel);
                responses = FuzzedBroker.responses(channel);
            }
            channel.checkException();
            assertThat(responses).as("one request, at most one response").hasSizeLessThanOrEqualTo(1);
            for (ByteBuffer r : responses) {
                AbstractResponse parsed = AbstractResponse.parseResponse(r, header);
                assertThat(parsed.apiKey()).isEqualTo(key);
            }
        } finally {
            channel.finishAndReleaseAll();
        }
        return size;
    }
}
