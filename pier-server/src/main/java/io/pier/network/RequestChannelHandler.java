package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.pier.protocol.ApiRequest;
import io.pier.protocol.ApiRouter;
import io.pier.security.SaslAuthenticators;
import io.pier.service.Futures;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per connection, on its event loop. Decodes each frame's header and body with kafka-clients,
 * hands the request to the {@link ApiRouter}, and writes responses strictly in request order
 * (the client matches them FIFO), whatever order the handlers finish in.
 *
 * <p>Each response becomes a kafka-clients {@code Send} that refers to its records where they are
 * (see {@link ResponseEncoder}). A small one is copied into a pooled buffer; a larger one, such
 * as a fetch of segment slices, is handed to Netty as a {@link SendFileRegion} and sent from the
 * files with sendfile. A response whose write fails part-way closes the connection.
 *
 * <p>A frame that cannot be parsed, or a version outside the advertised range, closes this
 * connection only. ApiVersions of an unsupported version is answered with a v0 body carrying
 * UNSUPPORTED_VERSION and the supported ranges, so newer clients can fall back (KIP-511).
 */
final class RequestChannelHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(RequestChannelHandler.class);
    private static final AtomicLong CONNECTION_IDS = new AtomicLong();
    /** Requests parsed but not yet answered; past this the socket stops being read. */
    private static final int MAX_IN_FLIGHT = 32;
    /**
     * Frames up to this size are copied into a buffer; larger ones are transferred. Measured with
     * 32 pipelined fetches on one connection: a 1 KB fetch from the files is answered about 2.5
     * times as fast copied (one socket write) as transferred (a header write plus a sendfile per
     * segment); at 32 KB the two are about even; at 120 KB the transfer is ahead. Responses
     * without records measured the same either way.
     */
    static final int COPY_MAX_BYTES = 64 * 1024;

    private final ApiRouter router;
    private final String listenerName;
    /** This connection's TLS handler, null on plaintext; a file region cannot pass through it. */
    private final SslHandler tls;
    /** Maps a verified client certificate's subject to the principal; null leaves User:ANONYMOUS. */
    private final SslPrincipalMapper tlsPrincipals;
    /** The listener's SASL settings, null when it does not authenticate with SASL. */
    private final SaslAuthenticators sasl;
    private final int maxFrameBytes;
    /** {@code queued.max.request.bytes}: each request's frame bytes go back to it once it is answered. */
    private final RequestBytesBudget budget;
    /** The connection's decoder, which may be waiting for room in the budget; null without one (tests). */
    private FrameDecoder decoder;
    /** Set when the connection closed and gave back the bytes of every request still unanswered. */
    private boolean gaveBackAll;
    private SaslGate gate;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final ChannelFutureListener closeOnFailedWrite = this::onWriteDone;
    private Connection connection;
    private ChannelHandlerContext ctx;
    /** Until when (System.nanoTime) a quota keeps this connection from being read; 0 if it does not. */
    private long throttledUntilNanos;

    /**
     * {@code body} is null only for the KIP-511 ApiVersions answer to an unsupported version;
     * {@code serveNanos} is the time this thread spent reading and dispatching the request, for
     * {@code request_percentage}, or -1 for the answers no quota applies to (SASL, that ApiVersions).
     */
    private record Pending(RequestHeader header, AbstractRequest body, CompletableFuture<AbstractResponse> response,
            boolean closeAfter, KafkaPrincipal principal, long serveNanos, int frameBytes) {}

    RequestChannelHandler(ApiRouter router) {
        this(router, "PLAINTEXT", null);
    }

    RequestChannelHandler(ApiRouter router, String listenerName, SslHandler tls) {
        this(router, listenerName, tls, null, null, Integer.MAX_VALUE, RequestBytesBudget.unlimited());
    }

    /**
     * {@code tlsPrincipals} maps a client certificate to the principal (SSL listeners); on a SASL
     * listener {@code maxFrameBytes} is the frame limit once authenticated.
     */
    RequestChannelHandler(ApiRouter router, String listenerName, SslHandler tls, SslPrincipalMapper tlsPrincipals,
            SaslAuthenticators sasl, int maxFrameBytes, RequestBytesBudget budget) {
        this.router = router;
        this.listenerName = listenerName;
        this.tls = tls;
        this.tlsPrincipals = tlsPrincipals;
        this.sasl = sasl;
        this.maxFrameBytes = maxFrameBytes;
        this.budget = budget;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.decoder = ctx.pipeline().get(FrameDecoder.class);
        InetSocketAddress remote = (InetSocketAddress) ctx.channel().remoteAddress();
        this.connection = new Connection("conn-" + CONNECTION_IDS.incrementAndGet() + "-" + remote, remote,
                listenerName, tls);
        if (tls != null && tlsPrincipals != null) {
            Connection c = connection;
            // Requests are read only after the handshake, so they all see the certificate's principal.
            tls.handshakeFuture().addListener(f -> {
                if (f.isSuccess()) {
                    TlsPrincipals.fromCertificate(c, tlsPrincipals);
                }
            });
        }
        if (sasl != null) {
            gate = new SaslGate(sasl, connection, ctx.pipeline().get(FrameDecoder.class), maxFrameBytes,
                    ctx.executor());
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        connection.markClosed();
        // Answers still to come will not be sent: their requests' bytes go back to the budget now.
        for (Pending p : pending) {
            budget.giveBack(p.frameBytes());
        }
        gaveBackAll = true;
        ctx.fireChannelInactive();
    }

    /**
     * A client that does not read its responses fills the socket, then Netty's outbound buffer:
     * past its high-water mark (Netty's default, 64 KiB) this connection's requests are not read
     * either, so what waits for that client stays bounded by {@link #MAX_IN_FLIGHT} responses
     * plus that buffer; below the low mark reading resumes.
     */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            resumeReadingIfDue();
        } else {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.debug("Closing idle connection {} (connections.max.idle.ms)", connection.id());
            ctx.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            return;
        }
        if (evt == FrameDecoder.RoomForRequests.INSTANCE) {
            resumeReadingIfDue();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.info("Closing connection {}: {}", connection == null ? "?" : connection.id(), cause.toString());
        ctx.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        long startNanos = System.nanoTime();
        ByteBuffer frame = (ByteBuffer) msg;
        int frameBytes = frame.remaining();
        RequestHeader header;
        try {
            rejectNegativeClientIdLength(frame);
            header = RequestHeader.parse(frame);
        } catch (RuntimeException e) {
            LOG.info("Closing connection {}: unreadable request header ({})", connection.id(), e.toString());
            closeUnserved(frameBytes);
            return;
        }
        ApiKeys key = header.apiKey();
        if (gate != null && !gate.admits(key)) {
            // Kafka closes too: nothing but ApiVersions and SASL is read from an unauthenticated client.
            LOG.info("Closing connection {}: {} refused, SASL {}", connection.id(), key, gate.state());
            closeUnserved(frameBytes);
            return;
        }
        if (!router.supports(key, header.apiVersion())) {
            if (key == ApiKeys.API_VERSIONS) {
                enqueue(header, null,
                        CompletableFuture.completedFuture(router.apiVersionsResponse(Errors.UNSUPPORTED_VERSION)), false,
                        -1, frameBytes);
                return;
            }
            LOG.info("Closing connection {}: {} v{} is not supported", connection.id(), key, header.apiVersion());
            closeUnserved(frameBytes);
            return;
        }
        AbstractRequest body;
        try {
            body = AbstractRequest.parseRequest(key, header.apiVersion(), new ByteBufferAccessor(frame)).request;
        } catch (RuntimeException e) {
            LOG.info("Closing connection {}: malformed {} v{} request ({})", connection.id(), key,
                    header.apiVersion(), e.toString());
            closeUnserved(frameBytes);
            return;
        }
        SaslGate.Answer answer = gate == null ? null : gate.handle(body);
        if (answer != null) {
            enqueue(header, body, answer.response(), answer.closeAfter(), -1, frameBytes);
            return;
        }
        CompletableFuture<AbstractResponse> response;
        try {
            response = router.route(new ApiRequest(header, body, connection));
        } catch (RuntimeException e) {
            response = CompletableFuture.failedFuture(e);
        }
        enqueue(header, body, response.exceptionally(t -> errorResponse(header, body, t)), false,
                System.nanoTime() - startNanos, frameBytes);
    }

    /** A request that will not be served closes its connection; its bytes go back to the budget first. */
    private void closeUnserved(int frameBytes) {
        budget.giveBack(frameBytes);
        ctx.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
    }

    /**
     * kafka-clients reads any negative client_id length as null, so a length of -2 would be
     * accepted and the body read from the bytes that follow. Only -1 means null; anything below is
     * a malformed header. Every request header version in use (v1, v2) puts the int16 length at
     * byte 8, after api_key, api_version and correlation_id.
     */
    private static void rejectNegativeClientIdLength(ByteBuffer frame) {
        if (frame.remaining() >= 10 && frame.getShort(frame.position() + 8) < -1) {
            throw new IllegalArgumentException("client_id length " + frame.getShort(frame.position() + 8));
        }
    }

    private AbstractResponse errorResponse(RequestHeader header, AbstractRequest body, Throwable t) {
        Throwable cause = Futures.unwrap(t);
        if (Errors.forException(cause) == Errors.UNKNOWN_SERVER_ERROR) {
            LOG.error("{} v{} from {} failed", header.apiKey(), header.apiVersion(), connection.id(), cause);
        }
        return body.getErrorResponse(0, cause);
    }

    private void enqueue(RequestHeader header, AbstractRequest body, CompletableFuture<AbstractResponse> response,
            boolean closeAfter, long serveNanos, int frameBytes) {
        pending.add(new Pending(header, body, response, closeAfter, connection.principal(), serveNanos, frameBytes));
        if (pending.size() >= MAX_IN_FLIGHT) {
            ctx.channel().config().setAutoRead(false);
        }
        response.whenComplete((r, t) -> {
            if (ctx.executor().inEventLoop()) {
                writeCompleted();
            } else {
                ctx.executor().execute(this::writeCompleted);
            }
        }).exceptionally(t -> { // a response that cannot be written closes the connection, as above
            ctx.channel().pipeline().fireExceptionCaught(Futures.unwrap(t));
            return null;
        });
    }

    private void writeCompleted() {
        boolean wrote = false;
        while (!pending.isEmpty() && pending.peek().response().isDone()) {
            Pending p = pending.poll();
            giveBack(p);
            if (p.response().isCompletedExceptionally()) {
                // Only when even the API's error response could not be built: nothing to send.
                Throwable cause = p.response().handle((r, t) -> Futures.unwrap(t)).join();
                LOG.error("Closing connection {}: no response could be built for {} v{}", connection.id(),
                        p.header().apiKey(), p.header().apiVersion(), cause);
                closeAfterFlush(wrote);
                return;
            }
            AbstractResponse response = p.response().getNow(null);
            int requestThrottleMs = recordRequestTime(p, p.serveNanos());
            if (response == null) {
                continue; // acks=0 produce: the client expects nothing back
            }
            if (!ctx.channel().isActive()) {
                continue;
            }
            if (requestThrottleMs > response.throttleTimeMs()) {
                response.maybeSetThrottleTimeMs(requestThrottleMs);
            }
            Object frame;
            try {
                long encodeStartNanos = System.nanoTime();
                frame = frame(ResponseEncoder.encode(p.header(), p.body(), response, connection.id()));
                // As Kafka's network-thread time: counted once the response is built, so it throttles the next one.
                recordRequestTime(p, System.nanoTime() - encodeStartNanos);
            } catch (ResponseEncoder.UnencodableResponseException e) {
                LOG.error("Closing connection {}: {}", connection.id(), e.getMessage(), e);
                closeAfterFlush(wrote);
                return;
            } catch (IOException e) {
                LOG.info("Closing connection {}: the response to {} v{} could not be read ({})", connection.id(),
                        p.header().apiKey(), p.header().apiVersion(), e.toString());
                closeAfterFlush(wrote);
                return;
            }
            if (p.closeAfter()) {
                // A failed login or a refused mechanism: the answer is sent, then the connection ends.
                ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
                pending.forEach(this::giveBack);
                pending.clear();
                return;
            }
            ctx.write(frame).addListener(closeOnFailedWrite);
            wrote = true;
            if (response.throttleTimeMs() > 0) {
                throttle(response.throttleTimeMs());
            }
        }
        if (wrote) {
            ctx.flush();
        }
        resumeReadingIfDue();
    }

    /** A request is answered (or will never be): its frame's bytes go back to the budget, once. */
    private void giveBack(Pending p) {
        if (!gaveBackAll) {
            budget.giveBack(p.frameBytes());
        }
    }

    /** Counts request time against the client's request_percentage; returns its throttle time in ms. */
    private int recordRequestTime(Pending p, long nanos) {
        ApiRouter.RequestTimeQuota quota = router.requestTimeQuota();
        if (nanos < 0 || quota == ApiRouter.RequestTimeQuota.NONE) {
            return 0;
        }
        return quota.record(p.principal(), p.header().clientId(), nanos);
    }

    /**
     * A response over a client quota says how long the client is to wait: like Kafka, the broker
     * also stops reading its connection that long, so a client that ignores the time is held too.
     */
    private void throttle(int throttleMs) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(throttleMs);
        if (until - throttledUntilNanos > 0) {
            throttledUntilNanos = until;
        }
        ctx.channel().config().setAutoRead(false);
        var unused = ctx.executor().schedule(this::resumeReadingIfDue, throttleMs, TimeUnit.MILLISECONDS);
    }

    private void resumeReadingIfDue() {
        if (throttledUntilNanos != 0) {
            if (throttledUntilNanos - System.nanoTime() > 0) {
                return;
            }
            throttledUntilNanos = 0;
        }
        if (pending.size() < MAX_IN_FLIGHT / 2 && ctx.channel().isWritable() && !ctx.channel().config().isAutoRead()
                && (decoder == null || !decoder.waitingForRoom())) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** Sends the responses already written (they precede the failed one), then closes. */
    private void closeAfterFlush(boolean wrote) {
        if (wrote) {
            ctx.flush();
        }
        ctx.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
    }

    /**
     * A small frame is copied into one pooled buffer, which Netty writes together with the frames
     * next to it; a larger one goes as a {@link SendFileRegion}, its records (a fetch's segment
     * slices) transferred from where they are. On TLS a larger one is read chunk by chunk into
     * pooled buffers instead ({@link SendChunkedInput}): the {@link SslHandler} encrypts buffers
     * and cannot take a file region.
     */
    private Object frame(Send send) throws IOException {
        if (send.size() > COPY_MAX_BYTES) {
            return tls == null ? new SendFileRegion(send) : new SendChunkedInput(send);
        }
        ByteBuf out = ctx.alloc().buffer((int) send.size());
        try {
            ByteBufTarget.copy(send, out);
        } catch (IOException e) {
            out.release();
            throw e;
        } catch (RuntimeException e) {
            out.release();
            throw new IOException(e);
        }
        return out;
    }

    /**
     * A frame that fails half-written (its segment deleted under it, say) leaves the stream
     * unusable: close the connection, and the client sends its request again.
     */
    private void onWriteDone(ChannelFuture future) {
        if (future.isSuccess()) {
            return;
        }
        Throwable cause = future.cause();
        if (cause instanceof ClosedChannelException) {
            // The frames queued behind the one that failed, or behind a close: nothing to report.
            LOG.debug("Connection {} closed before a response was written", connection.id());
        } else {
            LOG.info("Closing connection {}: a response could not be written ({})", connection.id(), cause.toString());
        }
        future.channel().close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
    }
}
