package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The state value with release backoffs (version 1), and how a backoff merges. */
class ShareStateRecordsBackoffTest {
    @Test
    void shouldWriteVersionZeroWithoutBackoffAndVersionOneWithIt() {
        List<PersistedBatch> plain = List.of(new PersistedBatch(0, 4, PersistedBatch.ACKNOWLEDGED, (short) 1));
        byte[] v0 = ShareStateRecords.stateValue(3, 0, plain);
        assertThat(ByteBuffer.wrap(v0).getShort()).isZero();
        assertThat(ShareStateRecords.decodeState(ByteBuffer.wrap(v0)).batches()).isEqualTo(plain);

        List<PersistedBatch> withBackoff = List.of(
                new PersistedBatch(0, 4, PersistedBatch.ACKNOWLEDGED, (short) 1),
                new PersistedBatch(5, 5, PersistedBatch.AVAILABLE, (short) 2, 1_765_000_000_000L));
        byte[] v1 = ShareStateRecords.stateValue(3, 0, withBackoff);
        assertThat(ByteBuffer.wrap(v1).getShort()).isEqualTo((short) 1);
        ShareState decoded = ShareStateRecords.decodeState(ByteBuffer.wrap(v1));
        assertThat(decoded.batches()).isEqualTo(withBackoff);
        assertThat(decoded.batches().get(0).hasBackoff()).isFalse();
    }

    @Test
    void shouldLetTheReleaseOfADeliveryWinOverItsAcquisition() {
        PersistedBatch acquired = new PersistedBatch(0, 9, PersistedBatch.AVAILABLE, (short) 2);
        PersistedBatch released = new PersistedBatch(3, 3, PersistedBatch.AVAILABLE, (short) 2, 5_000);

        List<PersistedBatch> forward = StateBatchCombiner.combine(List.of(acquired), List.of(released), 0);
        List<PersistedBatch> backward = StateBatchCombiner.combine(List.of(released), List.of(acquired), 0);

        assertThat(forward).isEqualTo(backward).containsExactly(
                new PersistedBatch(0, 2, PersistedBatch.AVAILABLE, (short) 2),
                released,
                new PersistedBatch(4, 9, PersistedBatch.AVAILABLE, (short) 2));
    }

    @Test
    void shouldDropTheBackoffOfARecordNoLongerAvailable() {
        PersistedBatch archived = new PersistedBatch(0, 0, PersistedBatch.ARCHIVED, (short) 2, 5_000);
        assertThat(archived.hasBackoff()).isFalse();
    }
}
