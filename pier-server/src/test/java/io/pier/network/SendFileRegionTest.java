package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The region Netty writes a response through: on channels that, like a socket with a full buffer,
 * take fewer bytes than they are offered, and sometimes none; and on a real loopback socket.
 */
@Timeout(60)
class SendFileRegionTest {
    private static final short FETCH_V12 = 12;
    private static final RequestHeader HEADER = new RequestHeader(ApiKeys.FETCH, FETCH_V12, "test", 42);

    @TempDir
    Path tmp;

    private final List<FileRecords> files = new ArrayList<>();

    @AfterEach
    void closeFiles() throws IOException {
        for (FileRecords f : files) {
            f.close();
        }
    }

    @Test
    void shouldWriteEveryByteWhenEachTransferTakesLessThanAsked() throws IOException {
        assertWholeResponseThrough(new StingyChannel(0, 1, 7, 300, 0, 4096));
    }

    @Test
    void shouldWriteEveryByteThroughAGatheringChannel() throws IOException {
        assertWholeResponseThrough(new GatheringStingyChannel(3, 0, 65_536, 11));
    }

    @Test
    void shouldReadALargeResponseInBoundedChunksForTls() throws IOException {
        // Given a fetch response of heap and file records larger than several chunks
        MemoryRecords heap = records("heap", 20_000);
        FileRecords file = fileRecords(records("file", 40_000));
        Send whole = send(heap, file);
        ByteBuf expected = Unpooled.buffer((int) whole.size());
        ByteBufTarget.copy(whole, expected);
        SendChunkedInput input = new SendChunkedInput(send(heap, file));
        assertThat(input.length()).isGreaterThan(3L * SendChunkedInput.CHUNK_BYTES);

        // When the chunked writer reads it to the end
        ByteBuf out = Unpooled.buffer();
        int chunks = 0;
        while (!input.isEndOfInput() && chunks < 1_000) {
            ByteBuf chunk = input.readChunk(UnpooledByteBufAllocator.DEFAULT);
            assertThat(chunk.readableBytes()).isPositive().isLessThanOrEqualTo(SendChunkedInput.CHUNK_BYTES);
            out.writeBytes(chunk);
            chunk.release();
            chunks++;
        }

        // Then every chunk but the last was full, and the bytes are the whole response
        assertThat(chunks).isEqualTo((int) ((input.length() + SendChunkedInput.CHUNK_BYTES - 1) / SendChunkedInput.CHUNK_BYTES));
        assertThat(input.progress()).isEqualTo(input.length());
        assertThat(input.readChunk(UnpooledByteBufAllocator.DEFAULT)).isNull();
        assertThat(ByteBufUtil.equals(out, expected)).isTrue();
    }

    private void assertWholeResponseThrough(StingyChannel channel) throws IOException {
        // Given a fetch response with heap records and records from a file
        MemoryRecords heap = records("heap", 50);
        FileRecords file = fileRecords(records("file", 400));
        SendFileRegion region = new SendFileRegion(send(heap, file));
        assertThat(region.count()).isGreaterThan(heap.sizeInBytes() + file.sizeInBytes());

        // When Netty's loop runs: transfer from transferred() until count() bytes are written
        int calls = 0;
        while (region.transferred() < region.count()) {
            long before = region.transferred();
            long n = region.transferTo(channel, before);
            assertThat(n).isEqualTo(channel.out.size() - before).isEqualTo(region.transferred() - before);
            calls++;
        }

        // Then it took many partial writes, and the bytes are the whole response
        assertThat(calls).isGreaterThan(4);
        assertThat(region.transferTo(channel, region.transferred())).isZero();
        ByteBuffer frame = ByteBuffer.wrap(channel.out.toByteArray());
        assertThat((long) frame.remaining()).isEqualTo(region.count());
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        FetchResponse parsed = (FetchResponse) AbstractResponse.parseResponse(frame, HEADER);
        List<PartitionData> partitions = parsed.data().responses().get(0).partitions();
        assertThat(bytesOf(partitions.get(0).records())).isEqualTo(bytesOf(heap));
        assertThat(bytesOf(partitions.get(1).records())).isEqualTo(Files.readAllBytes(file.file().toPath()));
        assertThat(region.release()).isTrue();
    }

    @Test
    void shouldSendEveryByteOverARealSocketWhoseBufferFillsUp() throws Exception {
        // Given 2 MB of file records behind a heap header, and a loopback socket with small buffers
        MemoryRecords heap = records("heap", 50);
        FileRecords file = fileRecords(records("file", 100_000));
        SendFileRegion region = new SendFileRegion(send(heap, file));
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel reader = SocketChannel.open()) {
                reader.setOption(StandardSocketOptions.SO_RCVBUF, 8192);
                reader.connect(server.getLocalAddress());
                try (SocketChannel writer = server.accept(); Selector selector = Selector.open()) {
                    writer.setOption(StandardSocketOptions.SO_SNDBUF, 8192);
                    writer.configureBlocking(false);
                    writer.register(selector, SelectionKey.OP_WRITE);
                    CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> readAll(reader,
                            region.count()));

                    // When the region is transferred as Netty does, waiting for writability on a zero
                    int shortTransfers = 0;
                    while (region.transferred() < region.count()) {
                        long left = region.count() - region.transferred();
                        long n = region.transferTo(writer, region.transferred());
                        if (n < left) {
                            shortTransfers++;
                        }
                        if (n == 0) {
                            selector.select(5_000);
                            selector.selectedKeys().clear();
                        }
                    }

                    // Then transfers came up short, and the reader got exactly the frame
                    assertThat(shortTransfers).isPositive();
                    ByteBuffer frame = ByteBuffer.wrap(received.get(30, TimeUnit.SECONDS));
                    assertThat(frame.getInt()).isEqualTo(frame.remaining());
                    FetchResponse parsed = (FetchResponse) AbstractResponse.parseResponse(frame, HEADER);
                    List<PartitionData> partitions = parsed.data().responses().get(0).partitions();
                    assertThat(bytesOf(partitions.get(0).records())).isEqualTo(bytesOf(heap));
                    assertThat(bytesOf(partitions.get(1).records()))
                            .isEqualTo(Files.readAllBytes(file.file().toPath()));
                }
            }
        }
    }

    private static byte[] readAll(SocketChannel channel, long count) {
        ByteBuffer all = ByteBuffer.allocate((int) count);
        try {
            while (all.hasRemaining() && channel.read(all) >= 0) {
                // reads until the whole frame is in
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return all.array();
    }

    @Test
    void shouldRefuseATransferFromAnotherPosition() throws IOException {
        SendFileRegion region = new SendFileRegion(send(records("heap", 5), fileRecords(records("file", 5))));
        StingyChannel channel = new StingyChannel(10);
        region.transferTo(channel, 0);

        assertThatThrownBy(() -> region.transferTo(channel, 0)).isInstanceOf(IOException.class);
    }

    @Test
    void shouldFailWithAnIoErrorWhenTheFileIsClosedMidTransfer() throws IOException {
        // Given a response partly written, its records on a file
        FileRecords file = fileRecords(records("file", 400));
        SendFileRegion region = new SendFileRegion(send(MemoryRecords.EMPTY, file));
        StingyChannel channel = new StingyChannel(100);
        region.transferTo(channel, 0);
        region.transferTo(channel, region.transferred());

        // When the file is closed (its segment deleted), Then the next transfer fails with an I/O error
        file.channel().close();
        assertThatThrownBy(() -> region.transferTo(channel, region.transferred())).isInstanceOf(IOException.class);
    }

    @Test
    void shouldFailWithAnIoErrorWhenTheFileShrankUnderTheTransfer() throws IOException {
        FileRecords file = fileRecords(records("file", 400));
        SendFileRegion region = new SendFileRegion(send(MemoryRecords.EMPTY, file));
        StingyChannel channel = new StingyChannel(100);
        region.transferTo(channel, 0);

        file.channel().truncate(file.sizeInBytes() / 2);
        assertThatThrownBy(() -> region.transferTo(channel, region.transferred())).isInstanceOf(IOException.class);
    }

    private static Send send(BaseRecords first, BaseRecords second) {
        FetchableTopicResponse topic = new FetchableTopicResponse().setTopic("t");
        topic.partitions().add(new PartitionData().setPartitionIndex(0).setRecords(first));
        topic.partitions().add(new PartitionData().setPartitionIndex(1).setRecords(second));
        FetchResponseData data = new FetchResponseData();
        data.responses().add(topic);
        return SendBuilder.buildResponseSend(HEADER.toResponseHeader(), data, FETCH_V12);
    }

    private static MemoryRecords records(String prefix, int count) {
        SimpleRecord[] rs = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            rs[i] = new SimpleRecord(1_700_000_000_000L, null, (prefix + "-" + i).getBytes());
        }
        return MemoryRecords.withRecords(Compression.NONE, rs);
    }

    private FileRecords fileRecords(MemoryRecords records) throws IOException {
        File f = tmp.resolve("segment-" + files.size() + ".log").toFile();
        FileRecords file = FileRecords.open(f);
        files.add(file);
        file.append(records);
        file.flush();
        return file;
    }

    private static byte[] bytesOf(BaseRecords records) {
        return bytesOf(((MemoryRecords) records).buffer());
    }

    private static byte[] bytesOf(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    /** Takes, call after call, at most the next number of bytes in its pattern. */
    private static class StingyChannel implements WritableByteChannel {
        final int[] pattern;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        int call;

        StingyChannel(int... pattern) {
            this.pattern = pattern;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = Math.min(src.remaining(), pattern[call++ % pattern.length]);
            byte[] taken = new byte[n];
            src.get(taken);
            out.write(taken, 0, n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }

    /** A stingy channel that also takes several buffers in one call, as a socket does. */
    private static final class GatheringStingyChannel extends StingyChannel implements GatheringByteChannel {
        GatheringStingyChannel(int... pattern) {
            super(pattern);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            long budget = pattern[call++ % pattern.length];
            long total = 0;
            for (int i = offset; i < offset + length && total < budget; i++) {
                int n = (int) Math.min(srcs[i].remaining(), budget - total);
                byte[] taken = new byte[n];
                srcs[i].get(taken);
                out.write(taken, 0, n);
                total += n;
            }
            return total;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }
    }
}
