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

/** The Kafka listener: accepts connections and gives each a frame decoder and a request handler. */
public final class NetworkServer implements AutoCloseable {
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel serverChannel;

    public NetworkServer(String host, int port, int maxFrameBytes, long idleMs, ApiRouter router, int ioThreads)
            throws InterruptedException {
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
            serverChannel = bootstrap.bind(host, port).sync().channel();
        } catch (RuntimeException | InterruptedException e) {
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            throw e;
        }
    }

    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public void close() {
        serverChannel.close().awaitUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
