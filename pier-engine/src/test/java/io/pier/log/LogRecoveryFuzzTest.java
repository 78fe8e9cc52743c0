package io.pier.log;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * A partition log's recovery ({@link LogRecovery} through {@link PartitionLog#open}) on a
 * directory whose segment holds fuzzer-chosen bytes, after up to three good batches, with or
 * without a recovery checkpoint that claims some or all of it was fsynced.
 *
 * <p>Input: a flag byte (bits 0-1: good batches first; bit 2: a checkpoint at the file's end;
 * bit 3: a checkpoint at the position given by the next 4 bytes; bit 4: the bytes are a batch
 * whose CRC is recomputed), then the bytes appended to the segment. Kept inputs, in {@code
 * LogRecoveryFuzzTestInputs/openSegment/}: a torn tail, a flipped byte inside a checkpointed
 * region, a checkpoint past the end, a CRC-valid batch with a bad length, and two findings: a
 * CRC-valid control batch with compression id 5, and one whose record length is an overlong
 * varint (see LogRecoveryTest's damaged batches).
 */
class LogRecoveryFuzzTest {
    private static final long T0 = 1_700_000_000_000L;
    private static final String SEGMENT = "00000000000000000000.log";
    private static final LogConfig CONFIG = TestBatches.config(Durability.DURABLE);
    private static Path root;
    /** Per count of good batches (0 to 3), the files a log leaves after them, flushed, and a crash. */
    private static final List<List<Path>> GOOD_FILES = new ArrayList<>();
    private static int run;

    /**
     * Writes the four possible starting folders once; each input starts from a copy. They do not
     * depend on the input, and making them anew per input (an open, appends, a flush) cost as much
     * as the recovery under test.
     */
    @BeforeAll
    static void makeRoot() throws IOException {
        root = TestFiles.scratchDirectory("pier-recovery-fuzz");
        for (int batches = 0; batches < 4; batches++) {
            Path dir = root.resolve("good-" + batches);
            PartitionLog log = PartitionLog.open(dir, CONFIG, new ManualClock(T0));
            for (int i = 0; i < batches; i++) {
                log.append(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(T0, ("v" + i).getBytes(UTF_8))));
            }
            log.flush();
            log.closeAbruptly();
            try (Stream<Path> files = Files.list(dir)) {
                GOOD_FILES.add(files.sorted().toList());
            }
        }
    }

    @AfterAll
    static void removeRoot() throws IOException {
        TestFiles.deleteTree(root);
    }

    /**
     * Invariant: the log opens (the damaged tail cut, never growing the file) or open throws an
     * IOException naming the log's directory or file, never another exception and never a hang;
     * a log that opened takes a new batch at its end offset, and reopens to the same end.
     */
    @FuzzTest(maxDuration = "60s")
    void openSegment(byte[] input) throws IOException {
        if (input.length == 0) {
            return;
        }
        int flags = input[0] & 0xff;
        Path dir = Files.createDirectory(root.resolve("p-" + run++));
        for (Path file : GOOD_FILES.get(flags & 3)) {
            Files.copy(file, dir.resolve(file.getFileName()));
        }
        ManualClock clock = new ManualClock(T0);
        int tailFrom = 1;
        int claimed = -1;
        if ((flags & 8) != 0 && input.length >= 5) {
            claimed = ByteBuffer.wrap(input, 1, 4).getInt();
            tailFrom = 5;
        }
        byte[] tail = java.util.Arrays.copyOfRange(input, tailFrom, input.length);
        if ((flags & 16) != 0) {
            RecordBatchFuzzTest.fixCrc(ByteBuffer.wrap(tail));
        }
        Path segment = dir.resolve(SEGMENT);
        Files.write(segment, tail, StandardOpenOption.APPEND);
        long size = Files.size(segment);
        if ((flags & 4) != 0 || claimed != -1) {
            String line = "v1 0 " + (claimed != -1 ? claimed : size) + "\n";
            Files.write(dir.resolve(RecoveryPoint.FILE_NAME), line.getBytes(UTF_8));
        }

        PartitionLog reopened;
        long expectedEnd;
        try {
            reopened = PartitionLog.open(dir, CONFIG, clock);
        } catch (IOException e) {
            assertThat(e.getMessage()).as("the refusal names the place").contains(dir.getFileName().toString());
            TestFiles.deleteTree(dir);
            return;
        }
        try {
            assertThat(Files.size(segment)).as("recovery only cuts").isLessThanOrEqualTo(size);
            long end = reopened.logEndOffset();
            AppendResult r = reopened.append(MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(T0, "after".getBytes(UTF_8))));
            assertThat(r.baseOffset()).as("appends go at the end").isEqualTo(end);
            reopened.flush();
            expectedEnd = reopened.logEndOffset();
        } finally {
            reopened.close();
        }
        try (PartitionLog again = PartitionLog.open(dir, CONFIG, clock)) {
            assertThat(again.logEndOffset()).as("end offset across a clean reopen").isEqualTo(expectedEnd);
        }
        TestFiles.deleteTree(dir);
    }

}
