package io.pier.log;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of {@link LogRecoveryFuzzTest} into the test resources. Run by hand
 * when the input format changes: {@code -Dpier.fuzz.seeds=write}.
 */
@EnabledIfSystemProperty(named = "pier.fuzz.seeds", matches = "write")
class LogRecoverySeeds {
    private static final Path DIR = Path.of("src/test/resources/io/pier/log/LogRecoveryFuzzTestInputs/openSegment");

    @Test
    void writeSeeds() throws IOException {
        Files.createDirectories(DIR);
        byte[] batch = batch();
        write("three-good-batches", 3, new byte[0]);
        write("torn-tail", 2, java.util.Arrays.copyOf(batch, 30));
        byte[] flipped = batch.clone();
        flipped[flipped.length - 2] ^= 1;
        write("flipped-byte-inside-checkpointed-region", 2 | 4, flipped);
        write("checkpoint-past-the-end", 8 | 2, ByteBuffer.allocate(4).putInt(1_000_000).array());
        write("checkpoint-negative", 8 | 1, ByteBuffer.allocate(4).putInt(-5).array());
        byte[] longer = batch.clone();
        ByteBuffer.wrap(longer).putInt(8, ByteBuffer.wrap(longer).getInt(8) + 100);
        write("crc-valid-batch-claiming-more-bytes", 16 | 1, longer);
        byte[] garbage = new byte[64];
        for (int i = 0; i < garbage.length; i++) {
            garbage[i] = (byte) (i * 37);
        }
        write("garbage-after-good-batches", 3, garbage);
    }

    private static byte[] batch() {
        ByteBuffer b = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(1_700_000_000_000L,
                "key".getBytes(UTF_8), "value".getBytes(UTF_8))).buffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static void write(String name, int flags, byte[] tail) throws IOException {
        byte[] out = new byte[1 + tail.length];
        out[0] = (byte) flags;
        System.arraycopy(tail, 0, out, 1, tail.length);
        Files.write(DIR.resolve(name), out);
    }
}
