package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

class HeapBufferAllocatorTest {
    private final HeapBufferAllocator alloc = new HeapBufferAllocator(ByteBufAllocator.DEFAULT);

    @Test
    void shouldGiveHeapBuffersForSocketReadsAndDefaultBuffersButDirectOnesWhenAskedFor() {
        List<ByteBuf> heap = List.of(alloc.ioBuffer(), alloc.ioBuffer(1024), alloc.ioBuffer(64, 4096), alloc.buffer(),
                alloc.buffer(1024), alloc.buffer(64, 4096), alloc.heapBuffer(16), alloc.compositeBuffer());
        ByteBuf direct = alloc.directBuffer(16);
        try {
            assertThat(heap).allSatisfy(b -> assertThat(b.isDirect()).isFalse());
            assertThat(direct.isDirect()).isTrue();
            assertThat(alloc.ioBuffer(64, 4096).release()).isTrue();
        } finally {
            heap.forEach(ByteBuf::release);
            direct.release();
        }
    }
}
