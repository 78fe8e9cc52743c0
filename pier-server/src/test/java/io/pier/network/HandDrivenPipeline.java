package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.protocol.ApiRouter;
import io.pier.server.Apis;
import io.pier.server.BrokerConfig;
import io.pier.service.BrokerServices;
import io.pier.service.HandDrivenServices;
import io.pier.service.NodeInfo;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * The real request pipeline over Netty's {@link EmbeddedChannel}, for tests: frames in, the
 * handler, responses out, with no socket and no thread; with a {@link HandDrivenServices} broker
 * behind it, every step of a request runs when the test says.
 */
final class HandDrivenPipeline {
    private HandDrivenPipeline() {}

    /** A router serving every API of {@code broker}, as node 1 at 127.0.0.1:9092. */
    static ApiRouter router(HandDrivenServices broker) {
        BrokerServices services = broker.services;
        ApiRouter router = new ApiRouter();
        Apis.register(router, services, new BrokerConfig(broker.config),
                () -> new NodeInfo(1, "127.0.0.1", 9092, services.topics().clusterId()), broker.clock);
        return router;
    }

    /** A client connection from 127.0.0.1:{@code port}, frames up to 1 MiB, served by {@code router}. */
    static EmbeddedChannel connection(ApiRouter router, int port) {
        return connection(port, 1 << 20, new RequestChannelHandler(router));
    }

    /** As {@link #connection(ApiRouter, int)}, its requests' bytes taken from {@code budget}. */
    static EmbeddedChannel connection(ApiRouter router, int port, RequestBytesBudget budget) {
        return connection(port, new FrameDecoder(1 << 20, budget),
                new RequestChannelHandler(router, "PLAINTEXT", null, null, null, 1 << 20, budget));
    }

    /** A client connection from 127.0.0.1:{@code port} through a frame decoder and {@code handler}. */
    static EmbeddedChannel connection(int port, int maxFrameBytes, RequestChannelHandler handler) {
        return connection(port, new FrameDecoder(maxFrameBytes), handler);
    }

    /** Writes {@code request} into {@code channel} as one frame, as client {@code clientId}; its header. */
    static RequestHeader send(EmbeddedChannel channel, AbstractRequest request, String clientId, int correlationId) {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId, correlationId);
        ByteBuffer payload = request.serializeWithHeader(header);
        ByteBuf frame = Unpooled.buffer(4 + payload.remaining());
        frame.writeInt(payload.remaining()).writeBytes(payload);
        channel.writeInbound(frame);
        return header;
    }

    /**
     * The next response frame {@code channel} wrote, parsed as the answer to {@code header}; null
     * when none is waiting. Throws when the frame's size prefix does not match its bytes.
     */
    static AbstractResponse readResponse(EmbeddedChannel channel, RequestHeader header) {
        ByteBuf out = channel.readOutbound();
        if (out == null) {
            return null;
        }
        try {
            int size = out.readInt();
            if (out.readableBytes() != size) {
                throw new AssertionError("a response frame of " + out.readableBytes() + " bytes announced " + size);
            }
            ByteBuffer bytes = ByteBuffer.allocate(size);
            out.readBytes(bytes);
            return AbstractResponse.parseResponse(bytes.flip(), header);
        } finally {
            out.release();
        }
    }

    private static EmbeddedChannel connection(int port, FrameDecoder decoder, RequestChannelHandler handler) {
        return new EmbeddedChannel(decoder, handler) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("127.0.0.1", port);
            }
        };
    }
}
