package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

class InMemorySharePersisterTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("g", new Uuid(1L, 2L), 3);
    private final InMemorySharePersister persister = new InMemorySharePersister();

    private static PersistedBatch b(long first, long last, byte state, int count) {
        return new PersistedBatch(first, last, state, (short) count);
    }

    @Test
    void shouldReturnNullForKeyNeverInitialised() {
        assertThat(persister.read(KEY)).isNull();
        assertThat(persister.write(new ShareStateWrite(KEY, 0, 0, List.of())).isCompletedExceptionally()).isTrue();
    }

    @Test
    void shouldMergeWritesAndReplaceStartOffset() {
        persister.initialize(KEY, 0).join();
        persister.write(new ShareStateWrite(KEY, 0, 0, List.of(b(0, 9, PersistedBatch.AVAILABLE, 1)))).join();
        persister.write(new ShareStateWrite(KEY, 0, 3, List.of(b(5, 6, PersistedBatch.ACKNOWLEDGED, 1)))).join();

        ShareState state = persister.read(KEY);

        assertThat(state.startOffset()).isEqualTo(3);
        assertThat(state.batches()).containsExactly(
                b(3, 4, PersistedBatch.AVAILABLE, 1), b(5, 6, PersistedBatch.ACKNOWLEDGED, 1),
                b(7, 9, PersistedBatch.AVAILABLE, 1));
    }

    @Test
    void shouldKeepStartOffsetWhenWriteSaysMinusOne() {
        persister.initialize(KEY, 7).join();
        persister.write(new ShareStateWrite(KEY, 0, -1, List.of(b(8, 8, PersistedBatch.ARCHIVED, 1)))).join();

        assertThat(persister.read(KEY).startOffset()).isEqualTo(7);
    }

    @Test
    void shouldFailInjectedWritesWithoutChangingState() {
        persister.initialize(KEY, 0).join();
        persister.failNextWrites(2);
        ShareStateWrite w = new ShareStateWrite(KEY, 0, 0, List.of(b(0, 0, PersistedBatch.ARCHIVED, 1)));

        assertThat(persister.write(w).isCompletedExceptionally()).isTrue();
        assertThat(persister.write(w).isCompletedExceptionally()).isTrue();
        assertThat(persister.read(KEY).batches()).isEmpty();
        assertThat(persister.write(w).isCompletedExceptionally()).isFalse();
        assertThat(persister.read(KEY).batches()).hasSize(1);
        assertThat(persister.writeCount()).isEqualTo(1);
    }

    @Test
    void shouldFenceOlderStateEpochAfterReinitialise() {
        persister.initialize(KEY, 0).join();
        persister.initialize(KEY, 5).join();

        assertThat(persister.read(KEY).stateEpoch()).isEqualTo(1);
        assertThat(persister.write(new ShareStateWrite(KEY, 0, 5, List.of())).isCompletedExceptionally()).isTrue();
        assertThat(persister.write(new ShareStateWrite(KEY, 1, 6, List.of())).isCompletedExceptionally()).isFalse();
    }

    @Test
    void shouldForgetDeletedKey() {
        persister.initialize(KEY, 0).join();
        persister.delete(KEY).join();

        assertThat(persister.read(KEY)).isNull();
    }
}
