package io.pier.network;

import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.WritableByteChannel;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;

/**
 * A kafka-clients {@link Send} (one whole response frame, size prefix included) as a Netty
 * {@link FileRegion}, so Netty writes it straight to the socket: heap buffers by plain writes,
 * file-backed records by {@code FileChannel.transferTo} (sendfile), nothing copied into a
 * {@code ByteBuf} first. Written on its connection's event loop only.
 *
 * <p>Netty's NIO transport calls {@link #transferTo} with {@link #transferred()} as the position
 * until {@link #count()} bytes are written; a call that writes nothing (a full socket buffer) makes
 * it wait for the socket to become writable. The {@code Send} keeps its own progress, so a call at
 * any other position is refused. Any failure, including a runtime one from kafka-clients (such
 * as a segment file found shorter than its slice), surfaces as an {@link IOException}: Netty then
 * closes the connection, whose response is already partly sent.
 */
final class SendFileRegion extends AbstractReferenceCounted implements FileRegion {
    /**
     * Most bytes taken from one heap buffer per write: the JDK copies a heap buffer into a cached
     * direct buffer of the same size, which would otherwise grow to the largest response.
     */
    static final int MAX_HEAP_WRITE_BYTES = 256 * 1024;

    private final Send send;
    private long transferred;
    private SocketTarget target;

    SendFileRegion(Send send) {
        this.send = send;
    }

    @Override
    public long position() {
        return 0;
    }

    @Override
    public long count() {
        return send.size();
    }

    @Override
    public long transferred() {
        return transferred;
    }

    @Override
    @Deprecated
    public long transfered() {
        return transferred;
    }

    @Override
    public long transferTo(WritableByteChannel channel, long position) throws IOException {
        if (position != transferred) {
            throw new IOException("transfer asked from " + position + " after " + transferred + " bytes");
        }
        if (send.completed()) {
            return 0;
        }
        if (target == null || target.channel != channel) {
            target = new SocketTarget(channel);
        }
        long written;
        try {
            written = send.writeTo(target);
        } catch (RuntimeException e) {
            throw new IOException("response write failed after " + transferred + " of " + count() + " bytes", e);
        }
        transferred += written;
        return written;
    }

    @Override
    public SendFileRegion retain() {
        super.retain();
        return this;
    }

    @Override
    public SendFileRegion retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public SendFileRegion touch() {
        return this;
    }

    @Override
    public SendFileRegion touch(Object hint) {
        return this;
    }

    @Override
    protected void deallocate() {
        // Nothing to free: the send's buffers are on the heap, and its files belong to the log.
    }

    /**
     * The socket as kafka-clients' {@link TransferableChannel}. Plain TCP has no pending writes
     * (only TLS would); closing is Netty's business, so {@link #close} does nothing.
     */
    static final class SocketTarget implements TransferableChannel {
        private final WritableByteChannel channel;

        SocketTarget(WritableByteChannel channel) {
            this.channel = channel;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            return fileChannel.transferTo(position, count, channel);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            if (src.isDirect() || src.remaining() <= MAX_HEAP_WRITE_BYTES) {
                return channel.write(src);
            }
            ByteBuffer part = src.duplicate();
            part.limit(part.position() + MAX_HEAP_WRITE_BYTES);
            int n = channel.write(part);
            src.position(src.position() + n);
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            if (channel instanceof GatheringByteChannel gathering && fitsOneGather(srcs, offset, length)) {
                return gathering.write(srcs, offset, length);
            }
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int wanted = srcs[i].remaining();
                int n = write(srcs[i]);
                total += n;
                if (n < wanted) {
                    break;
                }
            }
            return total;
        }

        @Override
        public long write(ByteBuffer[] srcs) throws IOException {
            return write(srcs, 0, srcs.length);
        }

        private static boolean fitsOneGather(ByteBuffer[] srcs, int offset, int length) {
            long heapBytes = 0;
            for (int i = offset; i < offset + length; i++) {
                if (!srcs[i].isDirect()) {
                    heapBytes += srcs[i].remaining();
                }
            }
            return heapBytes <= MAX_HEAP_WRITE_BYTES;
        }

        @Override
        public boolean isOpen() {
            return channel.isOpen();
        }

        @Override
        public void close() {}
    }
}
