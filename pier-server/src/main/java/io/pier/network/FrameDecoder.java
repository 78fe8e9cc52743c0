package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Splits the byte stream into Kafka request frames: a 4-byte big-endian size, then that many
 * bytes. A negative size or one over {@code socket.request.max.bytes} fails the connection before
 * any allocation, so a client cannot make the broker reserve memory it never sends.
 *
 * <p>A complete frame is copied out only once the broker's {@link RequestBytesBudget}
 * ({@code queued.max.request.bytes}) lets this connection take its bytes. Without room the frame
 * stays in Netty's buffer, reading stops, and the connection waits until answers elsewhere give
 * room back; then the frames already buffered are decoded and the request handler, which owns the
 * decision to read, is told ({@link RoomForRequests}).
 */
final class FrameDecoder extends ByteToMessageDecoder {
    /** The event the decoder fires down the pipeline when room in the budget came back. */
    enum RoomForRequests {
        INSTANCE
    }

    private final RequestBytesBudget budget;
    /** Changed only on the connection's event loop (the SASL gate lowers it until authentication). */
    private int maxFrameBytes;
    /** True while a complete frame waits for room in the budget; event loop only. */
    private boolean waitingForRoom;

    FrameDecoder(int maxFrameBytes) {
        this(maxFrameBytes, RequestBytesBudget.unlimited());
    }

    FrameDecoder(int maxFrameBytes, RequestBytesBudget budget) {
        this.maxFrameBytes = maxFrameBytes;
        this.budget = budget;
    }

    /** Whether reading must stay off until the budget has room (the request handler asks). */
    boolean waitingForRoom() {
        return waitingForRoom;
    }

    /** The limit for the frames after the one being handled. */
    void maxFrameBytes(int limit) {
        this.maxFrameBytes = limit;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 4) {
            return;
        }
        int size = in.getInt(in.readerIndex());
        if (size < 0 || size > maxFrameBytes) {
            in.skipBytes(in.readableBytes());
            throw new TooLongFrameException("request size " + size + " outside 0.." + maxFrameBytes
                    + " (socket.request.max.bytes; before SASL authentication sasl.server.max.receive.size)");
        }
        if (in.readableBytes() < 4 + size) {
            return;
        }
        if (waitingForRoom || !budget.tryTake(size)) {
            waitForRoom(ctx);
            return;
        }
        in.skipBytes(4);
        // kafka-clients parses from ByteBuffers and produce records keep referring to it,
        // so the frame is copied once into a heap buffer it owns.
        ByteBuffer frame = ByteBuffer.allocate(size);
        in.readBytes(frame);
        frame.flip();
        out.add(frame);
    }

    private void waitForRoom(ChannelHandlerContext ctx) {
        ctx.channel().config().setAutoRead(false);
        if (waitingForRoom) {
            return;
        }
        waitingForRoom = true;
        budget.whenRoom(() -> ctx.executor().execute(() -> roomCame(ctx)));
    }

    /** On the event loop: decode what waits in the buffer, then let the request handler resume reading. */
    private void roomCame(ChannelHandlerContext ctx) {
        waitingForRoom = false;
        if (ctx.isRemoved() || !ctx.channel().isActive()) {
            return;
        }
        try {
            // No new bytes: this runs decode over the buffered ones (the frame that waited, and any after it).
            channelRead(ctx, Unpooled.EMPTY_BUFFER);
        } catch (Exception e) {
            ctx.fireExceptionCaught(e);
            return;
        }
        ctx.fireUserEventTriggered(RoomForRequests.INSTANCE);
    }
}
