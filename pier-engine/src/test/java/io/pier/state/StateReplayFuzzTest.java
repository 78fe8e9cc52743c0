package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.Durability;
import io.pier.log.FileIO;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import io.pier.log.TestFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The replay of the broker's state stores on fuzzer-chosen records: the committed-offset store
 * ({@link DurableOffsetStore}), the share-state persister ({@link DurableSharePersister}) and
 * the transaction store ({@link DurableTransactionStore}). The records are written into the
 * partition log under the stores' {@link LocalShareStateLog}, so they are well framed and
 * CRC-valid and the replay's decoders see the fuzzed keys and values; the segment may then be
 * cut anywhere (a torn tail).
 *
 * <p>Input: a byte choosing the store (0-2) and, in bit 7, a cut; if cut, a 2-byte length to cut
 * the segment file to; then records of a key length (byte), the key, a value length (int16, -1
 * for a tombstone) and the value. Kept inputs, in {@code StateReplayFuzzTestInputs/replay/}: each
 * store's real records (offset commits, pending transactional offsets, share-state snapshot and
 * update, a share group, a transaction) and some torn versions.
 */
class StateReplayFuzzTest {
    private static final int MAX_RECORDS = 32;
    private static final long SEGMENT_BYTES = 1 << 20;
    private static Path root;
    private static int run;

    @BeforeAll
    static void makeRoot() throws IOException {
        root = TestFiles.scratchDirectory("pier-replay-fuzz");
    }

    @AfterAll
    static void removeRoot() throws IOException {
        TestFiles.deleteTree(root);
    }

    /**
     * Invariant: the store opens, or refuses with an IOException naming its directory; never
     * another exception, never a hang; nothing is reported fatal; a store that opened closes.
     */
    @FuzzTest(maxDuration = "60s")
    void replay(byte[] input) throws IOException {
        ByteBuffer in = ByteBuffer.wrap(input);
        int which = next(in);
        int cut = (which & 0x80) != 0 ? (next(in) << 8) | next(in) : -1;
        List<ShareStateLog.Entry> entries = new ArrayList<>();
        while (in.hasRemaining() && entries.size() < MAX_RECORDS) {
            byte[] key = bytes(in, next(in));
            int valueLength = in.remaining() >= 2 ? in.getShort() : -1;
            entries.add(new ShareStateLog.Entry(key, valueLength < 0 ? null : bytes(in, valueLength)));
        }
        Path dir = root.resolve("s-" + run++);
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        if (!entries.isEmpty()) {
            // Through the log under the store, not LocalShareStateLog.append, which takes only the
            // keys the stores encode: a replay must also cope with any key a damaged file holds.
            PartitionLog log = PartitionLog.open(dir, new LogConfig(SEGMENT_BYTES, Long.MAX_VALUE, -1, -1, 8 << 20,
                    4096, false, Durability.DURABLE), clock);
            try {
                SimpleRecord[] records = new SimpleRecord[entries.size()];
                for (int i = 0; i < records.length; i++) {
                    records[i] = new SimpleRecord(clock.wallMs(), entries.get(i).key(), entries.get(i).value());
                }
                log.append(MemoryRecords.withRecords(Compression.NONE, records));
                log.flush();
            } finally {
                log.close();
            }
        }
        if (cut >= 0) {
            Path segment = dir.resolve("00000000000000000000.log");
            if (Files.exists(segment)) {
                try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
                    ch.truncate(cut);
                }
            }
        }
        List<String> fatal = new ArrayList<>();
        AutoCloseable store;
        try {
            store = switch (which % 3) {
                case 0 -> DurableOffsetStore.open(dir, DurableOffsetStore.Options.DEFAULTS, clock, FileIO.REAL,
                        Wakeup.NONE, (what, cause) -> fatal.add(what));
                case 1 -> DurableSharePersister.open(dir, DurableSharePersister.Options.DEFAULTS, clock, FileIO.REAL,
                        Wakeup.NONE, (what, cause) -> fatal.add(what));
                default -> DurableTransactionStore.open(dir, DurableTransactionStore.Options.DEFAULTS, clock,
                        FileIO.REAL, Wakeup.NONE, (what, cause) -> fatal.add(what));
            };
        } catch (IOException e) {
            assertThat(e.getMessage()).as("the refusal names the place").contains(dir.getFileName().toString());
            TestFiles.deleteTree(dir);
            return;
        }
        try {
            store.close();
        } catch (Exception e) {
            throw new AssertionError("closing the store", e);
        }
        assertThat(fatal).as("fatal errors").isEmpty();
        TestFiles.deleteTree(dir);
    }

    private static byte[] bytes(ByteBuffer in, int n) {
        byte[] out = new byte[Math.min(n, in.remaining())];
        in.get(out);
        return out;
    }

    private static int next(ByteBuffer in) {
        return in.hasRemaining() ? in.get() & 0xff : 0;
    }

}
