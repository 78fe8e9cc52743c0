package io.pier.log;

import static io.pier.log.TestBatches.sized;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentRecordsTest {
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(T0);

    private static LogConfig smallSegments(Durability durability) {
        return new LogConfig(300, Long.MAX_VALUE, -1, -1, 1048588, 4096, false, durability);
    }

    @Test
    void shouldSendTheSameBytesAsTheHeapReadAcrossSegments() throws IOException {
        try (PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), smallSegments(Durability.NONE), clock)) {
            // Given batches of about 170 bytes, one per 300-byte segment
            for (int i = 0; i < 6; i++) {
                log.append(sized(T0, 100));
            }

            // When offsets 2.. are read in place and on the heap
            SegmentRecords inPlace = log.readInPlace(2, Integer.MAX_VALUE, true).records();
            MemoryRecords heap = log.read(2, Integer.MAX_VALUE, true).records();

            // Then the in-place read spans four segments and sends exactly the heap read's bytes
            assertThat(inPlace.slices()).hasSize(4);
            assertThat(inPlace.sizeInBytes()).isEqualTo(heap.sizeInBytes());
            assertThat(sent(inPlace.toSend(), 7)).isEqualTo(bytes(heap));
        }
    }

    @Test
    void shouldHonourMaxBytesAsTheHeapReadDoes() throws IOException {
        try (PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), smallSegments(Durability.NONE), clock)) {
            for (int i = 0; i < 6; i++) {
                log.append(sized(T0, 100));
            }
            int batch = log.read(0, Integer.MAX_VALUE, false).records().firstBatchSize();

            assertThat(log.readInPlace(0, batch * 2 + 1, false).records().sizeInBytes()).isEqualTo(batch * 2);
            assertThat(log.readInPlace(0, 1, true).records().sizeInBytes()).isEqualTo(batch);
            assertThat(log.readInPlace(0, 1, false).records()).isSameAs(SegmentRecords.EMPTY);
            assertThat(log.readInPlace(6, 1000, true).records()).isSameAs(SegmentRecords.EMPTY);
        }
    }

    @Test
    void shouldReadThroughTheFaultInjectingFileIo() throws IOException {
        PowerLossFileIO io = new PowerLossFileIO();
        try (PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), smallSegments(Durability.NONE), clock, io)) {
            // Given synced and unsynced (yet readable) batches behind the fault-injecting channels
            log.append(sized(T0, 100));
            log.append(sized(T0, 100));
            log.flush();
            log.append(sized(T0, 100));

            // When what is readable is read in place, Then it is the heap read's bytes
            MemoryRecords heap = log.read(0, Integer.MAX_VALUE, true).records();
            SegmentRecords inPlace = log.readInPlace(0, Integer.MAX_VALUE, true).records();
            assertThat(heap.sizeInBytes()).isPositive();
            assertThat(sent(inPlace.toSend(), 5)).isEqualTo(bytes(heap));
        }
    }

    @Test
    void shouldFailToSendOnceItsSegmentIsDeleted() throws IOException {
        try (PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), smallSegments(Durability.NONE), clock)) {
            // Given a read of the first segments, partly sent
            for (int i = 0; i < 4; i++) {
                log.append(sized(T0, 100));
            }
            Send send = log.readInPlace(0, Integer.MAX_VALUE, true).records().toSend();
            CollectingChannel out = new CollectingChannel(10);
            send.writeTo(out);

            // When DeleteRecords removes those segments
            log.deleteRecordsBefore(3);

            // Then the rest of the send fails with an I/O error instead of sending other bytes
            assertThatThrownBy(() -> send.writeTo(out)).isInstanceOf(IOException.class)
                    .hasMessageContaining("was closed (deleted)");
        }
    }

    private static byte[] bytes(MemoryRecords records) {
        ByteBuffer b = records.buffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** Writes {@code send} to a channel that takes at most {@code perWrite} bytes a call. */
    private static byte[] sent(Send send, int perWrite) throws IOException {
        CollectingChannel out = new CollectingChannel(perWrite);
        while (!send.completed()) {
            send.writeTo(out);
        }
        return out.bytes.toByteArray();
    }
}
