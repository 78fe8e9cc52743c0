package io.pier.log;

import static io.pier.log.TestBatches.GZIP;
import static io.pier.log.TestBatches.sized;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cleanup.policy on the log: retention only with "delete", keys required with "compact". */
class CompactedTopicLogTest {
    private static final long T0 = 1_700_000_000_000L;
    private final ManualClock clock = new ManualClock(T0);
    @TempDir
    Path tmp;

    private PartitionLog open(String policy) throws IOException {
        LogConfig small = new LogConfig(200, Long.MAX_VALUE, 10_000, 300, 1048588, 4096, false, Durability.NONE);
        return PartitionLog.open(tmp.resolve(policy.replace(',', '-') + "-0"),
                LogConfig.withTopicOverrides(small, Map.of("cleanup.policy", policy)), clock);
    }

    private static MemoryRecords keyed(Compression compression, String... keys) {
        SimpleRecord[] rs = new SimpleRecord[keys.length];
        for (int i = 0; i < keys.length; i++) {
            rs[i] = new SimpleRecord(T0, keys[i] == null ? null : keys[i].getBytes(UTF_8), new byte[100]);
        }
        return MemoryRecords.withRecords(compression, rs);
    }

    @Test
    void shouldKeepEverySegmentOfACompactedTopicPastRetention() throws IOException {
        try (PartitionLog log = open("compact")) {
            for (int i = 0; i < 5; i++) {
                log.append(keyed(Compression.NONE, "k" + i));
            }
            clock.advance(60_000);
            assertThat(log.enforceRetention()).isFalse();
            assertThat(log.logStartOffset()).isZero();
            assertThat(log.segmentCount()).isEqualTo(5);
        }
    }

    @Test
    void shouldApplyRetentionWhenThePolicyAlsoDeletes() throws IOException {
        try (PartitionLog log = open("compact,delete")) {
            for (int i = 0; i < 5; i++) {
                log.append(keyed(Compression.NONE, "k" + i));
            }
            clock.advance(60_000);
            assertThat(log.enforceRetention()).isTrue();
            assertThat(log.logStartOffset()).isEqualTo(4);
        }
    }

    @Test
    void shouldRefuseRecordsWithoutAKeyOnACompactedTopicOnly() throws IOException {
        try (PartitionLog compacted = open("compact"); PartitionLog plain = open("delete")) {
            assertThatThrownBy(() -> compacted.append(keyed(Compression.NONE, "a", null)))
                    .isInstanceOf(InvalidRecordException.class).hasMessageContaining("without key");
            assertThatThrownBy(() -> compacted.append(keyed(GZIP, "a", "b", null)))
                    .isInstanceOf(InvalidRecordException.class).hasMessageContaining("without key");
            assertThat(compacted.logEndOffset()).as("nothing of a refused batch is appended").isZero();

            compacted.append(keyed(GZIP, "a", "b"));
            plain.append(sized(T0, 10));
            assertThat(compacted.logEndOffset()).isEqualTo(2);
            assertThat(plain.logEndOffset()).isEqualTo(1);
        }
    }
}
