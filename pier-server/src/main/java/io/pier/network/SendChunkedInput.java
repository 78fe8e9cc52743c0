package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import org.apache.kafka.common.network.Send;

/**
 * A kafka-clients {@link Send} read into pooled buffers of at most {@link #CHUNK_BYTES} each, for
 * a TLS connection: Netty's {@code SslHandler} encrypts buffers and cannot take a file region, and
 * copying a large fetch whole would hold all of it in memory at once. Netty's
 * {@code ChunkedWriteHandler} asks for the next chunk only while the socket takes more, so a
 * connection holds about one chunk of a response at a time. Read on its connection's event loop.
 */
final class SendChunkedInput implements ChunkedInput<ByteBuf> {
    /** Fits a TLS record's worth of work many times over; small enough to keep memory flat. */
    static final int CHUNK_BYTES = 256 * 1024;

    private final Send send;
    private long read;

    SendChunkedInput(Send send) {
        this.send = send;
    }

    @Override
    public boolean isEndOfInput() {
        return send.completed();
    }

    @Override
    public void close() {
        // Nothing to free: the send's buffers are on the heap, and its files belong to the log.
    }

    @Override
    @Deprecated
    public ByteBuf readChunk(ChannelHandlerContext ctx) throws IOException {
        return readChunk(ctx.alloc());
    }

    @Override
    public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
        if (send.completed()) {
            return null;
        }
        int size = (int) Math.min(CHUNK_BYTES, send.size() - read);
        ByteBuf chunk = allocator.buffer(size, size);
        try {
            ByteBufTarget.fill(send, chunk);
        } catch (IOException e) {
            chunk.release();
            throw e;
        } catch (RuntimeException e) {
            chunk.release();
            throw new IOException("response read failed after " + read + " of " + send.size() + " bytes", e);
        }
        read += chunk.readableBytes();
        return chunk;
    }

    @Override
    public long length() {
        return send.size();
    }

    @Override
    public long progress() {
        return read;
    }
}
