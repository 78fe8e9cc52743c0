package io.pier.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * A TLS connection's allocator: every buffer not asked for as direct is a heap buffer from the
 * pooled {@code delegate}, socket reads ({@link #ioBuffer}) included. The JDK's SSLEngine (the only
 * engine Pier uses) runs AES-GCM on heap buffers directly; handed the direct buffers of Netty's
 * default allocator, it copies the ciphertext into temporary arrays and hashes it through
 * {@code GHASH.processBlocksDirect}, called once per TLS record, so seldom compiled early: in the
 * bench's TLS rows (pier-bench, {@code --only tls}) a quarter of the event loops' samples were
 * there, and with heap buffers the loops' samples over the same rows fell by about 40%. Kafka's
 * TLS transport reads into heap buffers too. Reading the socket into a heap buffer costs one copy
 * more, the JDK's.
 */
final class HeapBufferAllocator implements ByteBufAllocator {
    private final ByteBufAllocator delegate;

    HeapBufferAllocator(ByteBufAllocator delegate) {
        this.delegate = delegate;
    }

    @Override
    public ByteBuf buffer() {
        return delegate.heapBuffer();
    }

    @Override
    public ByteBuf buffer(int initialCapacity) {
        return delegate.heapBuffer(initialCapacity);
    }

    @Override
    public ByteBuf buffer(int initialCapacity, int maxCapacity) {
        return delegate.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf ioBuffer() {
        return delegate.heapBuffer();
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity) {
        return delegate.heapBuffer(initialCapacity);
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
        return delegate.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf heapBuffer() {
        return delegate.heapBuffer();
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity) {
        return delegate.heapBuffer(initialCapacity);
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
        return delegate.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf directBuffer() {
        return delegate.directBuffer();
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity) {
        return delegate.directBuffer(initialCapacity);
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
        return delegate.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public CompositeByteBuf compositeBuffer() {
        return delegate.compositeHeapBuffer();
    }

    @Override
    public CompositeByteBuf compositeBuffer(int maxNumComponents) {
        return delegate.compositeHeapBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer() {
        return delegate.compositeHeapBuffer();
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        return delegate.compositeHeapBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer() {
        return delegate.compositeDirectBuffer();
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        return delegate.compositeDirectBuffer(maxNumComponents);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return delegate.isDirectBufferPooled();
    }

    @Override
    public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
        return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
    }
}
