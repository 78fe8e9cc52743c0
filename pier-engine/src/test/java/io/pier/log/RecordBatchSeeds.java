package io.pier.log;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of {@link RecordBatchFuzzTest} into the test resources. Run by hand
 * when the input format changes: {@code -Dpier.fuzz.seeds=write}.
 */
@EnabledIfSystemProperty(named = "pier.fuzz.seeds", matches = "write")
class RecordBatchSeeds {
    static final long T0 = 1_700_000_000_000L;

    @Test
    void writeSeeds() throws IOException {
        Path dir = Path.of("src/test/resources/io/pier/log/RecordBatchFuzzTestInputs/produceBatch");
        Files.createDirectories(dir);
        for (CompressionType type : CompressionType.values()) {
            String name = type.name.toLowerCase(java.util.Locale.ROOT);
            write(dir.resolve("valid-" + name), 0, batch(type, 3, 10, true, -1));
            write(dir.resolve("valid-keyed-" + name + "-compacted"), 1, batch(type, 3, 10, true, -1));
            write(dir.resolve("idempotent-" + name), 0, batch(type, 2, 10, false, 7));
            if (type != CompressionType.NONE) {
                // Four keyed records of zeros: a few KB on the wire, up to 256 MB inflated.
                write(dir.resolve("bomb-" + name + "-compacted"), 1, batch(type, 4, bombValueBytes(type), true, -1));
            }
        }
    }

    /** Per codec, the value size that compresses to at most about 25 KB. */
    private static int bombValueBytes(CompressionType type) {
        return switch (type) {
            case ZSTD -> 64 << 20;
            case GZIP -> 4 << 20;
            case LZ4 -> 1 << 20;
            default -> 128 << 10; // snappy compresses zeros only about 20:1
        };
    }

    /** {@code count} records of {@code valueBytes} zeros (keyed or not), idempotent if {@code producerId} ≥ 0. */
    static ByteBuffer batch(CompressionType type, int count, int valueBytes, boolean keyed, long producerId) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.MAGIC_VALUE_V2,
                Compression.of(type).build(), TimestampType.CREATE_TIME, 0L, T0, producerId,
                producerId < 0 ? RecordBatch.NO_PRODUCER_EPOCH : (short) 0,
                producerId < 0 ? RecordBatch.NO_SEQUENCE : 0, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        byte[] value = new byte[valueBytes];
        for (int i = 0; i < count; i++) {
            b.append(new SimpleRecord(T0 + i, keyed ? ("k" + (i % 10)).getBytes(UTF_8) : null, value));
        }
        return b.build().buffer();
    }

    private static void write(Path file, int flags, ByteBuffer batch) throws IOException {
        byte[] out = new byte[1 + batch.remaining()];
        out[0] = (byte) flags;
        batch.get(out, 1, batch.remaining());
        Files.write(file, out);
    }
}
