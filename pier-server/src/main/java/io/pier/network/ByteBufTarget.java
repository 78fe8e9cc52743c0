package io.pier.network;

import io.netty.buffer.ByteBuf;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;

/**
 * A {@link ByteBuf} as kafka-clients' {@link TransferableChannel}: copies a whole {@link Send}
 * into one buffer, file-backed records read straight into it. For small responses, where one
 * pooled buffer (which Netty can gather with the responses next to it into one socket write) costs
 * less than a transfer of its own; and for each chunk of a large response on TLS
 * ({@link SendChunkedInput}). Writes stop at the buffer's capacity. Used on one event loop at a time.
 */
final class ByteBufTarget implements TransferableChannel {
    private final ByteBuf buf;

    private ByteBufTarget(ByteBuf buf) {
        this.buf = buf;
    }

    /** Writes all of {@code send} into {@code buf}, which must have room for it. */
    static void copy(Send send, ByteBuf buf) throws IOException {
        ByteBufTarget target = new ByteBufTarget(buf);
        while (!send.completed()) {
            if (send.writeTo(target) <= 0 && !send.completed()) {
                throw new EOFException("response stopped after " + buf.writerIndex() + " of " + send.size() + " bytes");
            }
        }
    }

    /** Writes the next {@code buf.writableBytes()} bytes of {@code send} (fewer at its end) into {@code buf}. */
    static void fill(Send send, ByteBuf buf) throws IOException {
        ByteBufTarget target = new ByteBufTarget(buf);
        while (!send.completed() && buf.isWritable()) {
            if (send.writeTo(target) <= 0 && !send.completed()) {
                throw new EOFException("response stopped at " + buf.writerIndex() + " bytes of a chunk");
            }
        }
    }

    @Override
    public boolean hasPendingWrites() {
        return false;
    }

    @Override
    public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
        int length = (int) Math.min(count, buf.writableBytes());
        int n = buf.writeBytes(fileChannel, position, length);
        return Math.max(n, 0);
    }

    /** Copies what fits in the buffer's room; the send keeps the rest for the next call. */
    @Override
    public int write(ByteBuffer src) {
        int n = Math.min(src.remaining(), buf.writableBytes());
        ByteBuffer part = src.duplicate();
        part.limit(part.position() + n);
        buf.writeBytes(part);
        src.position(src.position() + n);
        return n;
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
        long total = 0;
        for (int i = offset; i < offset + length && buf.isWritable(); i++) {
            total += write(srcs[i]);
        }
        return total;
    }

    @Override
    public long write(ByteBuffer[] srcs) {
        return write(srcs, 0, srcs.length);
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {}
}
