package io.pier.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.pier.protocol.ApiRouter;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka listener: accepts connections and gives each a frame decoder and a request handler.
 *
 * <p>Built in two steps, so that a broker can build it on another thread while its logs open:
 * the constructor makes the event loops, the pipeline and the server socket, not yet bound, and
 * initialises the classes of the first request's decoding and encoding ({@link CodecWarmup});
 * {@link #bind} then binds the socket and listens. Netty's and kafka-clients' static initialisation is about a third of a cold start,
 * and a class-data archive does not run it ahead of time. Routes may be added to the router
 * until {@link #bind}, which publishes them to the event loops.
 */
public final class NetworkServer implements AutoCloseable {
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel serverChannel;

    /** Event loops, pipeline and an unbound server socket registered with its loop. */
    public NetworkServer(int maxFrameBytes, long idleMs, ApiRouter router, int ioThreads) throws InterruptedException {
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(ioThreads, NioIoHandler.newFactory());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(new IdleStateHandler(0, 0, idleMs, TimeUnit.MILLISECONDS))
                                .addLast(new FrameDecoder(maxFrameBytes))
                                .addLast(new RequestChannelHandler(router));
                    }
                });
        try {
            serverChannel = bootstrap.register().sync().channel();
            CodecWarmup.run();
        } catch (RuntimeException | InterruptedException e) {
            shutDownLoops();
            throw e;
        }
    }

    /** Listens on {@code host:port} (0: an ephemeral port); after a failed bind, {@link #close} stops the loops. */
    public NetworkServer bind(String host, int port) throws InterruptedException {
        serverChannel.bind(new InetSocketAddress(host, port)).sync();
        return this;
    }

    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public void close() {
        serverChannel.close().awaitUninterruptibly();
        shutDownLoops();
    }

    private void shutDownLoops() {
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
