package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import io.pier.log.FileIO;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The share-state log contract on Pier's own partition log, plus what is particular to it: segments. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalShareStateLogTest extends ShareStateLogContract {
    private static final long SEGMENT_BYTES = 4096;

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);

    @Override
    protected ShareStateLog openBackend() throws IOException {
        return LocalShareStateLog.open(dir, SEGMENT_BYTES, clock, FileIO.REAL);
    }

    @Override
    protected void tearTail() throws IOException {
        Path last = segments().get(segments().size() - 1);
        try (RandomAccessFile f = new RandomAccessFile(last.toFile(), "rw")) {
            f.seek(f.length());
            f.write(new byte[] {0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 90, 1, 2, 3}); // a batch header cut short
        }
    }

    @Override
    protected void flipFlushedByte() throws IOException {
        Path last = segments().get(segments().size() - 1);
        try (RandomAccessFile f = new RandomAccessFile(last.toFile(), "rw")) {
            long at = f.length() - 5;
            f.seek(at);
            int v = f.read();
            f.seek(at);
            f.write(v ^ 0x40);
        }
    }

    private List<Path> segments() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
        }
    }

    @Test
    void shouldDeleteTheSegmentsWhollyBelowAMovedStart() throws IOException {
        // Given records over many segments
        try (LocalShareStateLog log = LocalShareStateLog.open(dir, SEGMENT_BYTES, clock, FileIO.REAL)) {
            assertThat(log.reclaimable()).as("one segment: nothing to free").isFalse();
            List<ShareStateLog.Entry> entries = new ArrayList<>();
            SharePartitionKey key = new SharePartitionKey("g", new Uuid(1L, 2L), 0);
            for (int i = 0; i < 100; i++) {
                entries.add(new ShareStateLog.Entry(ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key),
                        ShareStateRecords.stateValue(0, i, List.of())));
            }
            for (ShareStateLog.Entry e : entries) {
                log.append(List.of(e));
                log.flush();
            }
            int before = log.segmentCount();
            assertThat(before).isGreaterThan(2);
            assertThat(log.reclaimable()).isTrue();

            // When the start moves to the last record
            log.moveStart(99);

            // Then only the segment holding it is left
            assertThat(log.segmentCount()).isEqualTo(1);
            assertThat(segments()).hasSize(1);
        }
    }

    @Test
    void shouldNameTheDamagedSegmentFile() throws IOException {
        try (LocalShareStateLog log = LocalShareStateLog.open(dir, SEGMENT_BYTES, clock, FileIO.REAL)) {
            log.append(List.of(
                    new ShareStateLog.Entry(ShareStateRecords.groupKey("g"), ShareStateRecords.groupValue())));
            log.flush();
        }
        flipFlushedByte();
        assertThatThrownBy(this::openBackend).isInstanceOf(IOException.class)
                .hasMessageContaining("00000000000000000000.log");
    }
}
