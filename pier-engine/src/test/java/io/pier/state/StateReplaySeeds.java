package io.pier.state;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of {@link StateReplayFuzzTest} into the test resources, from the stores'
 * own encoders. Run by hand when the input format changes: {@code -Dpier.fuzz.seeds=write}.
 */
@EnabledIfSystemProperty(named = "pier.fuzz.seeds", matches = "write")
class StateReplaySeeds {
    private static final Path DIR = Path.of("src/test/resources/io/pier/state/StateReplayFuzzTestInputs/replay");
    private static final Uuid TOPIC = new Uuid(1, 2);
    private static final TopicPartition TP = new TopicPartition("t", 0);

    @Test
    void writeSeeds() throws IOException {
        Files.createDirectories(DIR);
        byte[][] offsets = {
            OffsetRecords.key("g", TP), OffsetRecords.value(new CommittedOffset(TOPIC, 10, 5, "meta", 42L)),
            OffsetRecords.key("g", new TopicPartition("t", 1)), OffsetRecords.value(new CommittedOffset(TOPIC, 3, -1, null, 43L)),
            OffsetRecords.pendingKey("g", 7L, TP), OffsetRecords.value(new CommittedOffset(TOPIC, 11, 5, "", 44L)),
            OffsetRecords.key("g", new TopicPartition("t", 1)), null,
        };
        write("offsets", 0, -1, offsets);
        write("offsets-torn", 0, 120, offsets);
        SharePartitionKey key = new SharePartitionKey("sg", TOPIC, 0);
        byte[][] share = {
            ShareStateRecords.groupKey("sg"), ShareStateRecords.groupValue(),
            ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key), ShareStateRecords.stateValue(0, 5, List.of(
                    new PersistedBatch(5, 9, PersistedBatch.ACKNOWLEDGED, (short) 1),
                    new PersistedBatch(12, 12, PersistedBatch.ARCHIVED, (short) 5))),
            ShareStateRecords.shareKey(ShareStateRecords.UPDATE, key), ShareStateRecords.stateValue(0, 10, List.of(
                    new PersistedBatch(10, 11, PersistedBatch.AVAILABLE, (short) 2))),
        };
        write("share-state", 1, -1, share);
        write("share-state-torn", 1, 150, share);
        byte[][] txn = {
            TransactionRecords.key("tx"), TransactionRecords.value(new TransactionRecord("tx", 7L, -1L, -1L, (short) 0,
                    (short) -1, 60_000, (byte) 1, Set.of(TP), Set.of("g"), 1_700_000_000_000L, 1_700_000_000_001L,
                    (short) 2)),
            TransactionRecords.key("gone"), null,
        };
        write("transactions", 2, -1, txn);
        write("transactions-torn", 2, 90, txn);
    }

    private static void write(String name, int store, int cut, byte[][] keysAndValues) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(cut >= 0 ? store | 0x80 : store);
        if (cut >= 0) {
            out.write(cut >> 8);
            out.write(cut);
        }
        for (int i = 0; i < keysAndValues.length; i += 2) {
            byte[] k = keysAndValues[i];
            byte[] v = keysAndValues[i + 1];
            out.write(k.length);
            out.write(k);
            out.write(ByteBuffer.allocate(2).putShort((short) (v == null ? -1 : v.length)).array());
            if (v != null) {
                out.write(v);
            }
        }
        Files.write(DIR.resolve(name), out.toByteArray());
    }
}
