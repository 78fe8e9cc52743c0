package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualAgentRunner;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.log.CrashPoint;
import io.pier.log.FileIO;
import io.pier.log.PowerLossFileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The transaction-state store driven by hand: each duty cycle is a {@code doWork} call. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DurableTransactionStoreTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);
    private final List<String> fatal = new CopyOnWriteArrayList<>();
    private DurableTransactionStore store;
    private ManualAgentRunner runner;

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    private DurableTransactionStore open(DurableTransactionStore.Options options, FileIO io) throws IOException {
        if (store != null) {
            store.close();
        }
        store = DurableTransactionStore.open(dir, options, clock, io, Wakeup.NONE, (what, cause) -> fatal.add(what));
        runner = new ManualAgentRunner(store, clock);
        return store;
    }

    private <T> T await(CompletableFuture<T> future) throws ExecutionException {
        return runner.await(future);
    }

    static TransactionRecord record(String id, long pid, int epoch, byte state, Set<TopicPartition> parts,
            Set<String> groups) {
        return new TransactionRecord(id, pid, -1, -1, (short) epoch, (short) -1, 60_000, state, parts, groups,
                parts.isEmpty() ? -1 : 999_000, 1_000_000, (short) 1);
    }

    @Test
    void shouldShowAWriteOnlyOnceDurableAndKeepTheLatestAcrossAReopen() throws Exception {
        // Given a write submitted but no duty cycle yet
        open(DurableTransactionStore.Options.DEFAULTS, FileIO.REAL);
        TransactionRecord ongoing = record("tx-é", 7, 3, (byte) 1, Set.of(P0, P1), Set.of("billing"));
        CompletableFuture<Void> w = store.write(record("tx-é", 7, 3, (byte) 0, Set.of(), Set.of()));
        CompletableFuture<Void> w2 = store.write(ongoing);
        assertThat(store.transactions()).isEmpty();

        // When the cycle runs
        await(w);
        await(w2);

        // Then the latest record of the id is visible, and survives a reopen whole
        assertThat(store.transactions()).containsOnlyKeys("tx-é").containsEntry("tx-é", ongoing);
        open(DurableTransactionStore.Options.DEFAULTS, FileIO.REAL);
        assertThat(store.transactions()).containsEntry("tx-é", ongoing);
        assertThat(fatal).isEmpty();
    }

    @Test
    void shouldForgetARemovedIdAndKeepColdIdsThroughCompaction() throws Exception {
        open(new DurableTransactionStore.Options(60_000, 1024), FileIO.REAL);
        TransactionRecord cold = record("cold", 1, 0, (byte) 4, Set.of(), Set.of());
        await(store.write(cold));
        await(store.write(record("gone", 2, 0, (byte) 0, Set.of(), Set.of())));
        for (int i = 0; i < 100; i++) {
            await(store.write(record("hot", 3, i, (byte) 1, Set.of(P0), Set.of())));
        }
        await(store.remove("gone"));
        await(store.compactNow());
        await(store.write(record("hot", 3, 500, (byte) 1, Set.of(P1), Set.of())));
        await(store.compactNow());

        assertThat(store.logStartOffset()).isGreaterThan(50);
        open(new DurableTransactionStore.Options(60_000, 1024), FileIO.REAL);
        assertThat(store.transactions()).containsOnlyKeys("cold", "hot");
        assertThat(store.transactions().get("cold")).isEqualTo(cold);
        assertThat(store.transactions().get("hot").producerEpoch()).isEqualTo((short) 500);
    }

    @Test
    void shouldKeepOnlyWhatWasDurableWhenTheLogCrashesMidBatch() throws Exception {
        // Given a durable PREPARE_COMMIT
        PowerLossFileIO io = new PowerLossFileIO();
        open(DurableTransactionStore.Options.DEFAULTS, io);
        TransactionRecord prepared = record("tx", 7, 1, (byte) 2, Set.of(P0), Set.of("g"));
        await(store.write(prepared));

        // When the next batch (two ids) is appended but the power goes before its fsync
        io.arm(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 1);
        CompletableFuture<Void> complete = store.write(record("tx", 7, 1, (byte) 4, Set.of(), Set.of()));
        CompletableFuture<Void> other = store.write(record("other", 8, 0, (byte) 0, Set.of(), Set.of()));
        assertThatThrownBy(() -> await(complete)).isInstanceOf(ExecutionException.class);
        assertThat(other).isCompletedExceptionally();
        assertThat(fatal).hasSize(1);
        io.powerLoss(null);
        store.close();
        store = null;

        // Then a reopen finds the transaction in PREPARE_COMMIT, nothing of the lost batch
        open(DurableTransactionStore.Options.DEFAULTS, FileIO.REAL);
        assertThat(store.transactions()).containsOnlyKeys("tx").containsEntry("tx", prepared);
    }
}
