package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import io.pier.share.RecordKeys;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys a share-partition ordered by key sees: hashes of the key bytes, read from the log. */
class RecordKeyHashesTest {
    @TempDir
    Path dir;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void shouldHashEqualKeysEquallyAndNullKeysToNoKey() {
        assertThat(RecordKeyHashes.hash(null)).isEqualTo(RecordKeys.NO_KEY);
        assertThat(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("order-1"))))
                .isEqualTo(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("order-1"))))
                .isNotEqualTo(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("order-2"))))
                .isNotEqualTo(RecordKeys.NO_KEY);
    }

    @Test
    void shouldReadTheKeysOfAStretchOfTheLogAcrossBatches() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir.resolve("t-0"), LogConfig.defaults(),
                new ManualClock(1_765_000_000_000L))) {
            log.append(MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(0, utf8("a"), utf8("v")), new SimpleRecord(0, null, utf8("v"))));
            log.append(MemoryRecords.withRecords(Compression.gzip().build(),
                    new SimpleRecord(0, utf8("b"), utf8("v")), new SimpleRecord(0, utf8("a"), utf8("v"))));
            log.flush();

            RecordKeys keys = RecordKeyHashes.read(log, 1, 4, 100);

            long a = RecordKeyHashes.hash(ByteBuffer.wrap(utf8("a")));
            assertThat(keys.keyOf(0)).as("before the stretch").isEqualTo(RecordKeys.NO_KEY);
            assertThat(keys.keyOf(1)).as("null key").isEqualTo(RecordKeys.NO_KEY);
            assertThat(keys.keyOf(2)).isEqualTo(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("b"))));
            assertThat(keys.keyOf(3)).as("in a compressed batch").isEqualTo(a);
        }
    }

    @Test
    void shouldGrowAtTheEndAndForgetAtTheStartWithoutReadingARecordTwice() throws Exception {
        try (PartitionLog log = PartitionLog.open(dir.resolve("t-1"), LogConfig.defaults(),
                new ManualClock(1_765_000_000_000L))) {
            for (int i = 0; i < 6; i++) {
                log.append(MemoryRecords.withRecords(Compression.NONE,
                        new SimpleRecord(0, utf8("k" + 2 * i), utf8("v")), new SimpleRecord(0, utf8("k" + (2 * i + 1)),
                                utf8("v"))));
            }
            log.flush();
            RecordKeyHashes keys = RecordKeyHashes.startingAt(3);

            keys.readUpTo(log, 5, 1);

            assertThat(keys.knownEnd()).as("whole batches: offset 4 ends in the batch of 4 and 5").isEqualTo(6);
            assertThat(keys.keyOf(2)).isEqualTo(RecordKeys.NO_KEY);
            assertThat(keys.keyOf(3)).isEqualTo(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("k3"))));
            assertThat(keys.keyOf(6)).as("not read yet").isEqualTo(RecordKeys.NO_KEY);

            keys.forgetBelow(5);
            keys.readUpTo(log, 9, 1);

            assertThat(keys.startOffset()).isEqualTo(5);
            assertThat(keys.knownEnd()).isEqualTo(10);
            assertThat(keys.keyOf(4)).as("forgotten").isEqualTo(RecordKeys.NO_KEY);
            for (int o = 5; o < 10; o++) {
                assertThat(keys.keyOf(o)).as("offset %d", o).isEqualTo(RecordKeyHashes.hash(ByteBuffer.wrap(utf8("k" + o))));
            }

            keys.readUpTo(log, 100, 1 << 20);
            assertThat(keys.knownEnd()).as("up to the log end").isEqualTo(12);
        }
    }
}
