package io.pier.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.pier.protocol.ApiRouter;
import io.pier.security.SaslAuthenticators;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

/**
 * The Kafka listeners: accept connections and give each a frame decoder and a request handler,
 * behind Netty's {@link SslHandler} on a TLS endpoint. All endpoints share one set of event loops.
 *
 * <p>Built in two steps, so that a broker can build it on another thread while its logs open:
 * the constructor makes the event loops, the pipeline and the server socket, not yet bound, and
 * initialises the classes of the first request's decoding and encoding ({@link CodecWarmup});
 * {@link #bind} then binds the socket and listens. Netty's and kafka-clients' static initialisation is about a third of a cold start,
 * and a class-data archive does not run it ahead of time. Routes may be added to the router
 * until {@link #bind}, which publishes them to the event loops.
 */
public final class NetworkServer implements AutoCloseable {
    /**
     * A listener to serve: its name, its TLS context (null for plaintext), how a verified client
     * certificate's subject becomes the connection's principal on an SSL listener (null: it stays
     * User:ANONYMOUS), and its SASL settings (null without SASL, whose login sets the principal).
     */
    public record Endpoint(String name, SslContext tls, SslPrincipalMapper tlsPrincipals, SaslAuthenticators sasl) {
        public Endpoint(String name, SslContext tls) {
            this(name, tls, null, null);
        }
    }

    /** The buffers of a TLS connection's channel: heap ones, see {@link HeapBufferAllocator}. */
    private static final ByteBufAllocator TLS_ALLOCATOR = new HeapBufferAllocator(ByteBufAllocator.DEFAULT);

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Map<String, Channel> serverChannels = new LinkedHashMap<>();
    /** Every open connection (a closed one leaves by itself), closed by {@link #close} before the loops stop. */
    private final ChannelGroup connections = new DefaultChannelGroup("pier-connections", GlobalEventExecutor.INSTANCE);
    /** Set before the connections are closed: one accepted just before and set up after closes itself. */
    private volatile boolean closing;
    private final ConnectionLimits limits;
    private final RequestBytesBudget requestBytes;

    /** One plaintext listener called {@code PLAINTEXT}. */
    public NetworkServer(int maxFrameBytes, long idleMs, ApiRouter router, int ioThreads) throws InterruptedException {
        this(maxFrameBytes, idleMs, router, ioThreads, List.of(new Endpoint("PLAINTEXT", null)));
    }

    /** Without connection limits. */
    public NetworkServer(int maxFrameBytes, long idleMs, ApiRouter router, int ioThreads, List<Endpoint> endpoints)
            throws InterruptedException {
        this(maxFrameBytes, idleMs, router, ioThreads, endpoints, ConnectionLimits.unlimited(),
                RequestBytesBudget.unlimited());
    }

    /**
     * Event loops, shared by every endpoint, and per endpoint a pipeline and an unbound server
     * socket; every connection takes a slot of {@code limits} first (see {@link ConnectionAdmission}),
     * and the bytes of the requests it has read but not answered from {@code requestBytes}.
     */
    public NetworkServer(int maxFrameBytes, long idleMs, ApiRouter router, int ioThreads, List<Endpoint> endpoints,
            ConnectionLimits limits, RequestBytesBudget requestBytes) throws InterruptedException {
        this.limits = limits;
        this.requestBytes = requestBytes;
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(ioThreads, NioIoHandler.newFactory());
        try {
            for (Endpoint endpoint : endpoints) {
                serverChannels.put(endpoint.name(), bootstrap(maxFrameBytes, idleMs, router, endpoint)
                        .register().sync().channel());
            }
            CodecWarmup.run();
        } catch (RuntimeException | InterruptedException e) {
            close();
            throw e;
        }
    }

    private ServerBootstrap bootstrap(int maxFrameBytes, long idleMs, ApiRouter router, Endpoint endpoint) {
        return new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (!ConnectionAdmission.admit(ch, endpoint.name(), limits)) {
                            return;
                        }
                        connections.add(ch);
                        if (closing) {
                            ch.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
                            return;
                        }
                        if (endpoint.tls() != null) {
                            ch.config().setAllocator(TLS_ALLOCATOR);
                        }
                        SslHandler tls = endpoint.tls() == null ? null : endpoint.tls().newHandler(ch.alloc());
                        if (tls != null) {
                            // Large responses come as chunked input on TLS (no file regions through TLS).
                            ch.pipeline().addLast(tls).addLast(new ChunkedWriteHandler());
                        }
                        ch.pipeline()
                                .addLast(new IdleStateHandler(0, 0, idleMs, TimeUnit.MILLISECONDS))
                                .addLast(new FrameDecoder(maxFrameBytes, requestBytes))
                                .addLast(new RequestChannelHandler(router, endpoint.name(), tls,
                                        endpoint.tlsPrincipals(), endpoint.sasl(), maxFrameBytes, requestBytes));
                    }
                });
    }

    /** Binds the first endpoint; see {@link #bind(String, String, int)}. */
    public NetworkServer bind(String host, int port) throws InterruptedException {
        return bind(serverChannels.keySet().iterator().next(), host, port);
    }

    /** Listens on {@code host:port} (0: an ephemeral port); after a failed bind, {@link #close} stops the loops. */
    public NetworkServer bind(String endpoint, String host, int port) throws InterruptedException {
        Channel channel = serverChannels.get(endpoint);
        if (channel == null) {
            throw new IllegalArgumentException("no endpoint " + endpoint);
        }
        channel.bind(new InetSocketAddress(host, port)).sync();
        return this;
    }

    /** The first endpoint's bound address. */
    public InetSocketAddress boundAddress() {
        return boundAddress(serverChannels.keySet().iterator().next());
    }

    public InetSocketAddress boundAddress(String endpoint) {
        return (InetSocketAddress) serverChannels.get(endpoint).localAddress();
    }

    /** {@code queued.max.request.bytes} and what it holds, for the metrics. */
    public RequestBytesBudget requestBytes() {
        return requestBytes;
    }

    /** The connections counted against the limits, by listener and address. */
    public ConnectionLimits connectionLimits() {
        return limits;
    }

    /**
     * Stops accepting, closes every connection, then stops the event loops. The connections are
     * closed here and not left to the loops: a loop that is told to shut down while it runs its
     * queued tasks (answers written from other threads) ends without closing its channels when
     * the quiet period is 0, and their sockets then stay open with nothing reading them, so a
     * client waits for answers that never come instead of reconnecting (NetworkServerCloseIT).
     */
    @Override
    public void close() {
        for (Channel channel : serverChannels.values()) {
            channel.close().awaitUninterruptibly();
        }
        closing = true;
        connections.close().awaitUninterruptibly();
        shutDownLoops();
    }

    private void shutDownLoops() {
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
