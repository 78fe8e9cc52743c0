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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The committed-offset store driven by hand: each duty cycle is a {@code doWork} call. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DurableOffsetStoreTest {
    private static final Uuid TOPIC_ID = new Uuid(3L, 4L);
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock(1_000_000);
    private final List<String> fatal = new CopyOnWriteArrayList<>();
    private DurableOffsetStore store;
    private ManualAgentRunner runner;

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
        assertThat(fatal).isEmpty();
    }

    private DurableOffsetStore open(DurableOffsetStore.Options options) throws IOException {
        if (store != null) {
            store.close();
        }
        store = DurableOffsetStore.open(dir, options, clock, FileIO.REAL, Wakeup.NONE, (what, cause) -> fatal.add(what));
        runner = new ManualAgentRunner(store, clock);
        return store;
    }

    private <T> T await(CompletableFuture<T> future) throws ExecutionException {
        return runner.await(future);
    }

    private static CommittedOffset at(long offset, String metadata) {
        return new CommittedOffset(TOPIC_ID, offset, 5, metadata, 42L);
    }

    @Test
    void shouldShowACommitOnlyOnceDurableAndKeepItAcrossAReopen() throws Exception {
        // Given a store with a commit submitted but no duty cycle yet
        open(DurableOffsetStore.Options.DEFAULTS);
        CompletableFuture<Void> commit = store.commit("g", Map.of(P0, at(10, "meta-é"), P1, at(20, null)));
        assertThat(store.offsets("g")).isEmpty();

        // When the cycle runs
        await(commit);

        // Then the offsets, metadata strings included, are visible and survive a reopen
        assertThat(store.offsets("g")).containsEntry(P0, at(10, "meta-é")).containsEntry(P1, at(20, null));
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.offsets("g")).containsEntry(P0, at(10, "meta-é")).containsEntry(P1, at(20, null));
        assertThat(store.groups()).containsExactly("g");
    }

    @Test
    void shouldForgetDeletedOffsetsGroupsAndTopicsAcrossAReopen() throws Exception {
        // Given offsets of two groups on two topics
        open(DurableOffsetStore.Options.DEFAULTS);
        TopicPartition other = new TopicPartition("gone", 0);
        Uuid otherId = new Uuid(9L, 9L);
        await(store.commit("a", Map.of(P0, at(1, null), P1, at(2, null))));
        await(store.commit("b", Map.of(P0, at(3, null),
                other, new CommittedOffset(otherId, 4, -1, "x", 1L))));

        // When a partition, a group and a topic are deleted, and "orders" is re-created with a new id
        await(store.delete("a", List.of(P1, new TopicPartition("never", 0))));
        await(store.deleteGroup("a"));
        await(store.retainTopics(Map.of("orders", TOPIC_ID)));

        // Then only b's offset of the live topic remains, also after a reopen
        assertThat(store.groups()).containsExactly("b");
        assertThat(store.offsets("b")).containsOnlyKeys(P0);
        await(store.retainTopics(Map.of("orders", new Uuid(1L, 1L))));
        assertThat(store.groups()).isEmpty();
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.groups()).isEmpty();
        assertThat(store.offsets("b")).isEmpty();
    }

    @Test
    void shouldMoveTheLogStartPastSupersededCommitsAndReplayTheLatest() throws Exception {
        // Given small segments and many commits of two keys, one of them cold
        open(new DurableOffsetStore.Options(60_000, 1024));
        await(store.commit("cold", Map.of(P0, at(7, "cold"))));
        for (int i = 0; i < 200; i++) {
            await(store.commit("hot", Map.of(P0, at(i, "m" + i))));
        }

        // When two compaction passes run (the first marks where the second may rewrite from)
        await(store.compactNow());
        await(store.commit("hot", Map.of(P0, at(1000, "last"))));
        await(store.compactNow());

        // Then the old segments went, and a reopen still knows both keys' latest commits
        assertThat(store.logStartOffset()).isGreaterThan(100);
        open(new DurableOffsetStore.Options(60_000, 1024));
        assertThat(store.offsets("hot")).containsEntry(P0, at(1000, "last"));
        assertThat(store.offsets("cold")).containsEntry(P0, at(7, "cold"));
    }

    @Test
    void shouldExpireOnlyOffsetsStillAsJudgedAndForgetThemAcrossAReopen() throws Exception {
        // Given two offsets that a retention check judged expired
        open(DurableOffsetStore.Options.DEFAULTS);
        await(store.commit("g", Map.of(P0, at(1, null), P1, at(2, null))));
        Map<TopicPartition, CommittedOffset> judged = store.offsets("g");

        // When P1 is committed again before the expiry reaches the store, in the same cycle
        CompletableFuture<Void> recommit = store.commit("g", Map.of(P1, at(3, null)));
        CompletableFuture<Void> expire = store.expire("g", judged);
        await(recommit);
        await(expire);

        // Then only P0 went: the newer commit stays, also after a reopen
        assertThat(store.offsets("g")).containsOnlyKeys(P1).containsEntry(P1, at(3, null));
        await(store.expire("g", Map.of(P1, at(3, null))));
        assertThat(store.groups()).isEmpty();
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.groups()).isEmpty();
        assertThat(store.offsets("g")).isEmpty();
    }

    @Test
    void shouldKeepTransactionalOffsetsApartUntilTheCommitMarkerAndAcrossAReopen() throws Exception {
        // Given offsets committed inside two transactions of one group
        open(DurableOffsetStore.Options.DEFAULTS);
        await(store.commit("g", Map.of(P0, at(1, null))));
        await(store.commitPending("g", 7L, Map.of(P0, at(10, "tx7"), P1, at(11, null))));
        await(store.commitPending("g", 8L, Map.of(P1, at(20, "tx8"))));

        // Then OffsetFetch still sees the committed offset, the pending ones survive a reopen
        assertThat(store.offsets("g")).containsOnly(Map.entry(P0, at(1, null)));
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.pendingPartitions("g")).containsExactlyInAnyOrder(P0, P1);
        assertThat(store.pendingOffsets("g", 7L)).containsEntry(P0, at(10, "tx7")).hasSize(2);

        // When 7 commits and 8 aborts
        await(store.completePending("g", 7L, true));
        await(store.completePending("g", 8L, false));

        // Then 7's offsets are the group's, 8's are gone, also after a reopen; a second marker changes nothing
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.offsets("g")).containsOnly(Map.entry(P0, at(10, "tx7")), Map.entry(P1, at(11, null)));
        assertThat(store.pendingPartitions("g")).isEmpty();
        await(store.completePending("g", 7L, true));
        assertThat(store.offsets("g")).hasSize(2);
    }

    @Test
    void shouldKeepPendingOffsetsWhenTheMarkerIsLostToACrash() throws Exception {
        // Given durable pending offsets
        PowerLossFileIO io = new PowerLossFileIO();
        store = DurableOffsetStore.open(dir, DurableOffsetStore.Options.DEFAULTS, clock, io, Wakeup.NONE,
                (what, cause) -> { });
        runner = new ManualAgentRunner(store, clock);
        await(store.commitPending("g", 7L, Map.of(P0, at(10, null), P1, at(11, null))));

        // When the commit marker is appended but the power goes before its fsync
        io.arm(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 1);
        CompletableFuture<Void> marker = store.completePending("g", 7L, true);
        assertThatThrownBy(() -> await(marker))
                .isInstanceOf(ExecutionException.class);
        io.powerLoss(null);
        store.close();
        store = null;

        // Then after a restart the offsets are still pending (all of them), and the marker written again commits them
        open(DurableOffsetStore.Options.DEFAULTS);
        assertThat(store.offsets("g")).isEmpty();
        assertThat(store.pendingOffsets("g", 7L)).containsOnlyKeys(P0, P1);
        await(store.completePending("g", 7L, true));
        assertThat(store.offsets("g")).containsOnlyKeys(P0, P1);
    }
}
