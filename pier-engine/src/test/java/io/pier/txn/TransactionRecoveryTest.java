package io.pier.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualAgentRunner;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.FileIO;
import io.pier.state.DurableTransactionStore;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinator over the durable store: a transaction caught in PREPARE_COMMIT by a crash (its
 * markers never finished) completes after the restart, all or nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransactionRecoveryTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);
    private final TransactionCoordinatorTest.RecordingMarkers markers =
            new TransactionCoordinatorTest.RecordingMarkers();

    private DurableTransactionStore openStore() throws Exception {
        return DurableTransactionStore.open(dir, DurableTransactionStore.Options.DEFAULTS, clock, FileIO.REAL,
                Wakeup.NONE, (what, cause) -> {
                    throw new AssertionError(what, cause);
                });
    }

    private TransactionCoordinator coordinator(DurableTransactionStore store) {
        return new TransactionCoordinator(TransactionConfig.DEFAULTS, clock,
                () -> CompletableFuture.completedFuture(42L), store, markers, Runnable::run, 0);
    }

    @Test
    void shouldCompleteACommitCaughtInPrepareCommitAfterARestart() throws Exception {
        // Given a commit whose PREPARE_COMMIT is durable and whose markers are not written yet
        DurableTransactionStore store = openStore();
        ManualAgentRunner runner = new ManualAgentRunner(store, clock);
        TransactionCoordinator c = coordinator(store);
        ProducerIdAndEpoch p = runner.await(c.initProducerId("tx", 60_000, -1, (short) -1));
        assertThat(runner.await(c.addPartitions("tx", p.producerId(), p.producerEpoch(), List.of(P0, P1))))
                .isEqualTo(Errors.NONE);
        assertThat(runner.await(c.addOffsets("tx", p.producerId(), p.producerEpoch(), "g"))).isEqualTo(Errors.NONE);
        assertThat(runner.await(c.endTxn("tx", p.producerId(), p.producerEpoch(), true, false)).error())
                .isEqualTo(Errors.NONE);
        assertThat(markers.calls).hasSize(1);

        // When the broker dies there (nothing more is written) and starts again
        store.close();
        store = openStore();
        runner = new ManualAgentRunner(store, clock);
        assertThat(store.transactions().get("tx").state()).isEqualTo(TransactionState.PREPARE_COMMIT.id());
        c = coordinator(store);
        c.recover(store.transactions().values());

        // Then the same commit markers are written again, and once durable the commit completes
        assertThat(markers.calls).hasSize(2);
        assertThat(markers.calls.get(1)).isEqualTo(markers.calls.get(0)).isEqualTo(
                new TransactionCoordinatorTest.Marker(42, (short) 0, 0, true, Set.of(P0, P1), Set.of("g")));
        markers.completeLast();
        runner.runUntilIdle();
        store.close();
        store = openStore();
        assertThat(store.transactions().get("tx").state()).isEqualTo(TransactionState.COMPLETE_COMMIT.id());
        assertThat(store.transactions().get("tx").partitions()).isEmpty();
        store.close();
    }
}
