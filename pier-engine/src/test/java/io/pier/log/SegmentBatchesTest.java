package io.pier.log;

import static io.pier.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentBatchesTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);

    /** Two batches of three small records (88 bytes each) per segment. */
    private static LogConfig smallSegments() {
        return new LogConfig(150, Long.MAX_VALUE, -1, -1, 1048588, 4096, false, Durability.NONE);
    }

    private static PartitionLog sixBatchesOfThree(Path dir, ManualClock clock) throws IOException {
        PartitionLog log = PartitionLog.open(dir, smallSegments(), clock);
        for (int i = 0; i < 6; i++) {
            log.append(values(T0, "a" + i, "b" + i, "c" + i));
        }
        return log;
    }

    @Test
    void shouldGiveTheBoundsOfTheBatchesTheHeapReadReturns() throws IOException {
        try (PartitionLog log = sixBatchesOfThree(tmp.resolve("t-0"), clock)) {
            // When offsets 4.. are read as batch bounds and on the heap
            SegmentBatches inPlace = log.readBatchesInPlace(4, Integer.MAX_VALUE, true);
            MemoryRecords heap = log.read(4, Integer.MAX_VALUE, true).records();

            // Then the bounds are the heap read's batches, from the one holding offset 4
            List<long[]> expected = new ArrayList<>();
            for (RecordBatch b : heap.batches()) {
                expected.add(new long[] {b.baseOffset(), b.lastOffset()});
            }
            List<long[]> actual = new ArrayList<>();
            for (int i = 0; i < inPlace.count(); i++) {
                actual.add(new long[] {inPlace.baseOffset(i), inPlace.lastOffset(i)});
            }
            assertThat(actual).containsExactlyElementsOf(expected);
            assertThat(inPlace.baseOffset(0)).isEqualTo(3);
            assertThat(inPlace.sizeInBytes()).isEqualTo(heap.sizeInBytes());
        }
    }

    @Test
    void shouldSendOnlyTheBatchesHoldingTheAskedOffsetsAcrossSegments() throws IOException {
        try (PartitionLog log = sixBatchesOfThree(tmp.resolve("t-0"), clock)) {
            SegmentBatches inPlace = log.readBatchesInPlace(0, Integer.MAX_VALUE, true);

            // When offsets 4..10 are asked for (the second to the fourth batch, over segments)
            SegmentRecords picked = inPlace.records(4, 10);

            // Then exactly those whole batches are sent, as the heap has them
            MemoryRecords heap = log.read(3, Integer.MAX_VALUE, true).records();
            ByteBuffer expected = heap.buffer().duplicate();
            int size = 0;
            for (RecordBatch b : heap.batches()) {
                if (b.baseOffset() <= 10) {
                    size += b.sizeInBytes();
                }
            }
            expected.limit(expected.position() + size);
            assertThat(picked.slices()).hasSizeGreaterThan(1);
            assertThat(picked.sizeInBytes()).isEqualTo(size);
            assertThat(sent(picked.toSend())).isEqualTo(bytes(expected));
        }
    }

    @Test
    void shouldHonourMaxBytesAndGiveNothingPastTheEnd() throws IOException {
        try (PartitionLog log = sixBatchesOfThree(tmp.resolve("t-0"), clock)) {
            int batch = log.read(0, Integer.MAX_VALUE, false).records().firstBatchSize();

            assertThat(log.readBatchesInPlace(0, batch * 2 + 1, false).count()).isEqualTo(2);
            assertThat(log.readBatchesInPlace(0, 1, true).count()).isEqualTo(1);
            assertThat(log.readBatchesInPlace(0, 1, false).isEmpty()).isTrue();
            assertThat(log.readBatchesInPlace(18, 1000, true)).isSameAs(SegmentBatches.EMPTY);
            assertThat(log.readBatchesInPlace(0, Integer.MAX_VALUE, true).records(18, 20))
                    .isSameAs(SegmentRecords.EMPTY);
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static byte[] sent(Send send) throws IOException {
        CollectingChannel out = new CollectingChannel(Integer.MAX_VALUE);
        while (!send.completed()) {
            send.writeTo(out);
        }
        return out.bytes.toByteArray();
    }
}
