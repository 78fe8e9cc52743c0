package io.pier.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * message.timestamp.before.max.ms and message.timestamp.after.max.ms, as Kafka checks them: on a
 * CreateTime topic a batch with a record stamped outside [now - before, now + after] of the
 * broker's clock is refused whole with INVALID_TIMESTAMP; Kafka's defaults are no limit behind and
 * one hour ahead. A LogAppendTime topic stamps the records itself and checks nothing, and no
 * producer may stamp a batch LogAppendTime.
 */
class TimestampBoundsTest {
    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(NOW);
    private PartitionLog log;

    @AfterEach
    void close() {
        if (log != null) {
            log.close();
        }
    }

    private void open(Map<String, String> topicConfigs) throws IOException {
        LogConfig config = LogConfig.withTopicOverrides(TestBatches.config(Durability.NONE), topicConfigs);
        log = PartitionLog.open(tmp.resolve("p"), config, clock);
    }

    @Test
    void shouldAcceptTimestampsUpToEachBoundAndRefuseABatchWithOnePast() throws IOException {
        open(Map.of("message.timestamp.before.max.ms", "1000", "message.timestamp.after.max.ms", "2000"));

        assertThat(log.append(TestBatches.withTimestamps(TestBatches.GZIP, NOW - 1000, NOW, NOW + 2000)).lastOffset())
                .isEqualTo(2);
        assertRefused(TestBatches.withTimestamps(TestBatches.GZIP, NOW, NOW - 1001, NOW),
                "Timestamp " + (NOW - 1001) + " of message with offset 1 is out of range. The timestamp should be"
                        + " within [" + (NOW - 1000) + ", " + (NOW + 2000) + "]");
        assertRefused(TestBatches.withTimestamps(TestBatches.GZIP, NOW + 2001),
                "Timestamp " + (NOW + 2001) + " of message with offset 0 is out of range");
        assertThat(log.logEndOffset()).as("nothing of a refused batch appended").isEqualTo(3);
    }

    @Test
    void shouldFollowTheBrokersClock() throws IOException {
        open(Map.of("message.timestamp.after.max.ms", "0"));
        assertRefused(TestBatches.withTimestamps(TestBatches.GZIP, NOW + 10), "out of range");

        clock.advance(10);

        assertThat(log.append(TestBatches.withTimestamps(TestBatches.GZIP, NOW + 10)).lastOffset()).isZero();
    }

    @Test
    void shouldRefuseOnlyAnHourAheadByDefault() throws IOException {
        open(Map.of());

        assertThat(log.append(TestBatches.withTimestamps(TestBatches.GZIP, 0, NOW + 3_600_000)).lastOffset())
                .as("a record from 1970 and one an hour ahead").isEqualTo(1);
        assertRefused(TestBatches.withTimestamps(TestBatches.GZIP, NOW + 3_600_001), "out of range");
        assertThat(log.config().asTopicConfigs()).containsEntry("message.timestamp.before.max.ms",
                Long.toString(Long.MAX_VALUE)).containsEntry("message.timestamp.after.max.ms", "3600000");
    }

    @Test
    void shouldAcceptRecordsWithoutTimestamp() throws IOException {
        open(Map.of("message.timestamp.before.max.ms", "0", "message.timestamp.after.max.ms", "0"));

        assertThat(log.append(TestBatches.withTimestamps(TestBatches.GZIP, RecordBatch.NO_TIMESTAMP)).lastOffset())
                .isZero();
    }

    @Test
    void shouldStampALogAppendTimeTopicWhateverTheProducerSaid() throws IOException {
        open(Map.of("message.timestamp.type", "LogAppendTime", "message.timestamp.after.max.ms", "0",
                "message.timestamp.before.max.ms", "0"));

        assertThat(log.append(TestBatches.withTimestamps(TestBatches.GZIP, 5, NOW + 9_000_000)).lastOffset())
                .isEqualTo(1);
    }

    @Test
    void shouldRefuseABatchAProducerStampedLogAppendTime() throws IOException {
        open(Map.of());
        MemoryRecords records = TestBatches.withTimestamps(TestBatches.GZIP, NOW);
        MutableRecordBatch batch = records.batches().iterator().next();
        batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, NOW);

        assertRefused(records, "LogAppendTime");
    }

    @Test
    void shouldReadAndCheckTheSettings() {
        LogConfig broker = LogConfig.fromBrokerProperties(Map.of("log.message.timestamp.before.max.ms", "60000",
                "log.message.timestamp.after.max.ms", "1000"));
        assertThat(broker.timestampBeforeMaxMs()).isEqualTo(60_000);
        assertThat(broker.timestampAfterMaxMs()).isEqualTo(1000);
        LogConfig topic = LogConfig.withTopicOverrides(broker, Map.of("message.timestamp.after.max.ms", "5"));
        assertThat(topic.timestampBeforeMaxMs()).as("from the broker").isEqualTo(60_000);
        assertThat(topic.timestampAfterMaxMs()).isEqualTo(5);

        assertThatThrownBy(() -> LogConfig.fromBrokerProperties(Map.of("log.message.timestamp.after.max.ms", "-1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.message.timestamp.after.max.ms");
        assertThatThrownBy(() -> LogConfig.withTopicOverrides(broker, Map.of("message.timestamp.before.max.ms", "x")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("message.timestamp.before.max.ms");
    }

    private void assertRefused(MemoryRecords records, String message) {
        long end = log.logEndOffset();
        assertThatThrownBy(() -> log.append(records))
                .isInstanceOf(InvalidTimestampException.class)
                .hasMessageContaining(message)
                .satisfies(e -> assertThat(Errors.forException(e)).isEqualTo(Errors.INVALID_TIMESTAMP));
        assertThat(log.logEndOffset()).isEqualTo(end);
    }
}
