package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Splits the byte stream into Kafka request frames: a 4-byte big-endian size, then that many
 * bytes. A negative size or one over {@code socket.request.max.bytes} fails the connection before
 * any allocation, so a client cannot make the broker reserve memory it never sends.
 */
final class FrameDecoder extends ByteToMessageDecoder {
    /** Changed only on the connection's event loop (the SASL gate lowers it until authentication). */
    private int maxFrameBytes;

    FrameDecoder(int maxFrameBytes) {
        this.maxFrameBytes = maxFrameBytes;
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
        in.skipBytes(4);
        // kafka-clients parses from ByteBuffers and produce records keep referring to it,
        // so the frame is copied once into a heap buffer it owns.
        ByteBuffer frame = ByteBuffer.allocate(size);
        in.readBytes(frame);
        frame.flip();
        out.add(frame);
    }
}
