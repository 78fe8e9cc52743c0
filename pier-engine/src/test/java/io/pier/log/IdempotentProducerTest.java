package io.pier.log;

import static io.pier.log.TestBatches.config;
import static io.pier.log.TestBatches.idempotent;
import static io.pier.log.TestBatches.offsetsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdempotentProducerTest {
    private static final long PID = 42;

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);

    private PartitionLog open() throws IOException {
        return PartitionLog.open(tmp.resolve("p"), config(Durability.NONE), clock);
    }

    @Test
    void shouldReturnOriginalOffsetsForDuplicateBatch() throws IOException {
        try (PartitionLog log = open()) {
            AppendResult first = log.append(idempotent(PID, (short) 0, 0, 3));
            log.append(idempotent(PID, (short) 0, 3, 2));

            AppendResult dup = log.append(idempotent(PID, (short) 0, 0, 3));

            assertThat(dup).isEqualTo(new AppendResult(first.baseOffset(), first.lastOffset(), -1, 0, true));
            assertThat(log.logEndOffset()).isEqualTo(5);
            assertThat(offsetsOf(log.read(0, 1 << 20, false).records())).hasSize(5);
        }
    }

    @Test
    void shouldRecogniseDuplicatesAfterReopen() throws IOException {
        try (PartitionLog log = open()) {
            log.append(TestBatches.values(1, "other"));
            log.append(idempotent(PID, (short) 1, 7, 2)); // offsets 1..2; unknown producers may start anywhere
        }
        try (PartitionLog log = open()) {
            AppendResult dup = log.append(idempotent(PID, (short) 1, 7, 2));
            assertThat(dup.duplicate()).isTrue();
            assertThat(dup.baseOffset()).isEqualTo(1);
            assertThat(dup.lastOffset()).isEqualTo(2);
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 1, 10, 1)))
                    .isInstanceOf(OutOfOrderSequenceException.class);
            assertThat(log.append(idempotent(PID, (short) 1, 9, 1)).baseOffset()).isEqualTo(3);
        }
    }

    @Test
    void shouldOnlyRememberTheLastFiveBatches() throws IOException {
        try (PartitionLog log = open()) {
            for (int seq = 0; seq < 6; seq++) {
                log.append(idempotent(PID, (short) 0, seq, 1));
            }
            assertThat(log.append(idempotent(PID, (short) 0, 1, 1)).duplicate()).isTrue();
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 0, 0, 1)))
                    .isInstanceOf(OutOfOrderSequenceException.class);
        }
    }

    @Test
    void shouldRejectSequenceGap() throws IOException {
        try (PartitionLog log = open()) {
            log.append(idempotent(PID, (short) 0, 0, 2));
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 0, 3, 1)))
                    .isInstanceOf(OutOfOrderSequenceException.class)
                    .satisfies(e -> assertThat(Errors.forException(e)).isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER));
            assertThat(log.logEndOffset()).isEqualTo(2);
        }
    }

    @Test
    void shouldRejectOldEpochAndRequireSequenceZeroForNewEpoch() throws IOException {
        try (PartitionLog log = open()) {
            log.append(idempotent(PID, (short) 3, 0, 1));
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 2, 1, 1)))
                    .isInstanceOf(InvalidProducerEpochException.class);
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 4, 5, 1)))
                    .isInstanceOf(OutOfOrderSequenceException.class);
            assertThat(log.append(idempotent(PID, (short) 4, 0, 1)).duplicate()).isFalse();
            assertThatThrownBy(() -> log.append(idempotent(PID, (short) 3, 1, 1)))
                    .isInstanceOf(InvalidProducerEpochException.class);
        }
    }

    @Test
    void shouldWrapSequenceAtIntMax() throws IOException {
        try (PartitionLog log = open()) {
            log.append(idempotent(PID, (short) 0, Integer.MAX_VALUE, 1));
            assertThat(log.append(idempotent(PID, (short) 0, 0, 1)).baseOffset()).isEqualTo(1);
        }
    }
}
