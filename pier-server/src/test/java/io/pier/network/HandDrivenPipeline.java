package io.pier.network;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.protocol.ApiRouter;
import io.pier.server.Apis;
import io.pier.server.BrokerConfig;
import io.pier.service.BrokerServices;
import io.pier.service.HandDrivenServices;
import io.pier.service.NodeInfo;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

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

    private static EmbeddedChannel connection(int port, FrameDecoder decoder, RequestChannelHandler handler) {
        return new EmbeddedChannel(decoder, handler) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("127.0.0.1", port);
            }
        };
    }
}
