package io.pier.log;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import org.apache.kafka.common.network.TransferableChannel;

/** A slow socket for Send tests: every write and transfer takes at most {@code perWrite} bytes; it keeps what it got. */
final class CollectingChannel implements TransferableChannel {
    private final int perWrite;
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final WritableByteChannel sink = Channels.newChannel(bytes);

    CollectingChannel(int perWrite) {
        this.perWrite = perWrite;
    }

    @Override
    public boolean hasPendingWrites() {
        return false;
    }

    @Override
    public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
        return fileChannel.transferTo(position, Math.min(count, perWrite), this);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        ByteBuffer part = src.duplicate();
        part.limit(part.position() + Math.min(perWrite, part.remaining()));
        int n = sink.write(part);
        src.position(src.position() + n);
        return n;
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        for (int i = offset; i < offset + length; i++) {
            if (srcs[i].hasRemaining()) {
                return write(srcs[i]);
            }
        }
        return 0;
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {}
}
