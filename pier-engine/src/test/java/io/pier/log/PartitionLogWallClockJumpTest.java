package io.pier.log;

import static io.pier.log.TestBatches.offsetsOf;
import static io.pier.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.JumpingClock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario S25 of the reliability reference, for the log: the wall clock, which stamps
 * LogAppendTime and keeps the segments' ages, steps an hour back and then two forwards between
 * appends. Each batch is stamped with the wall clock of its append, so the stamps go back and
 * then forwards; offsets stay dense, timestamp lookups still answer from the stamps, and the log
 * reopens with all of it.
 */
class PartitionLogWallClockJumpTest {
    private static final long T0 = 1_700_000_000_000L;
    private static final long HOUR_MS = 3_600_000;

    @TempDir
    Path tmp;

    private final JumpingClock clock = new JumpingClock(T0);

    @Test
    void shouldStampEachAppendWithTheWallClockOfItsAppendAcrossStepsBothWays() throws IOException {
        LogConfig d = LogConfig.defaults();
        LogConfig logAppendTime = new LogConfig(d.segmentBytes(), d.segmentMs(), d.retentionMs(), d.retentionBytes(),
                d.maxMessageBytes(), d.indexIntervalBytes(), true, Durability.NONE);
        PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), logAppendTime, clock);
        try {
            // Given an append at T0, then one after the wall clock stepped back an hour, then one
            // after it stepped two hours forwards
            assertThat(log.append(values(1, "a")).logAppendTimeMs()).isEqualTo(T0);
            clock.stepWall(-HOUR_MS);
            assertThat(log.append(values(1, "b")).logAppendTimeMs()).isEqualTo(T0 - HOUR_MS);
            clock.stepWall(2 * HOUR_MS);
            assertThat(log.append(values(1, "c")).logAppendTimeMs()).isEqualTo(T0 + HOUR_MS);

            // Then the log holds them at 0, 1, 2 with those stamps, and lookups follow the stamps
            assertLog(log);
            assertThat(log.offsetForTimestamp(T0 - HOUR_MS)).isEqualTo(new OffsetAndTimestamp(0, T0));
            assertThat(log.offsetForTimestamp(T0 + 1)).isEqualTo(new OffsetAndTimestamp(2, T0 + HOUR_MS));
        } finally {
            log.close();
        }

        // ... and the same after it is reopened, recovered with the wall clock an hour ahead
        PartitionLog reopened = PartitionLog.open(tmp.resolve("t-0"), logAppendTime, clock);
        try {
            assertLog(reopened);
            assertThat(reopened.append(values(1, "d")).logAppendTimeMs()).isEqualTo(T0 + HOUR_MS);
            assertThat(reopened.logEndOffset()).isEqualTo(4);
        } finally {
            reopened.close();
        }
    }

    private static void assertLog(PartitionLog log) throws IOException {
        MemoryRecords all = log.read(0, Integer.MAX_VALUE, false).records();
        assertThat(offsetsOf(all)).containsExactly(0L, 1L, 2L);
        List<Long> stamps = new ArrayList<>();
        for (RecordBatch b : all.batches()) {
            assertThat(b.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
            stamps.add(b.maxTimestamp());
        }
        assertThat(stamps).containsExactly(T0, T0 - HOUR_MS, T0 + HOUR_MS);
    }
}
