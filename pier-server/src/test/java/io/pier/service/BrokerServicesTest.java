package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.group.AutoOffsetReset;
import io.pier.group.HeartbeatRequest;
import io.pier.group.HeartbeatResponse;
import io.pier.log.FileIO;
import io.pier.runtime.ManualAgents;
import io.pier.share.AckBatch;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.state.ForwardingShareStateStore;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareStateStore;
import io.pier.state.TopicMetadata;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole broker's services, three shards plus the metadata and share-state agents, driven by hand
 * on a manual clock: no threads, the same order of events on every run. Share groups whose ids
 * hash to different shards, and a stand-in for the next coordinator, run side by side.
 */
class BrokerServicesTest {
    private static final int SHARDS = 3;
    private static final long LOCK_MS = 30_000;
    private static final long SESSION_MS = 45_000;

    @TempDir
    Path dir;
    private HandDrivenServices broker;
    private ManualAgents agents;
    private ManualClock clock;
    private BrokerServices services;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, SHARDS);
        agents = broker.agents;
        clock = broker.clock;
        services = broker.services;
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    /** Group ids whose coordinators sit on different shards. */
    private List<String> groupsOnDifferentShards(PartitionRegistry partitions) {
        Map<Integer, String> byShard = new HashMap<>();
        for (int i = 0; byShard.size() < 2 && i < 1_000; i++) {
            byShard.putIfAbsent(partitions.shardForKey("group-" + i).id(), "group-" + i);
        }
        return List.copyOf(byShard.values());
    }

    private HeartbeatResponse join(String group, String member, String topic) throws Exception {
        return agents.await(services.shareGroups().heartbeat(new HeartbeatRequest(group, member,
                HeartbeatRequest.JOIN_EPOCH, null, List.of(topic), "test", "/127.0.0.1")));
    }

    private void produce(TopicPartition tp, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            MemoryRecords batch = MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(clock.wallMs(), null, ("v" + i).getBytes()));
            assertThat(agents.await(services.logs().append(tp, batch)).error()).isEqualTo(Errors.NONE);
        }
    }

    private ShareService.Acquired acquire(TopicPartition tp, SharePartitionKey key, String member) throws Exception {
        return agents.await(services.shares().acquire(tp, key, member,
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null));
    }

    @Test
    void shouldRunShareGroupsOnDifferentShardsAndExpireTheirLocksAndSessionsOnTheClock() throws Exception {
        TopicMetadata topic = agents.await(services.topics().create("orders", SHARDS, Map.of(), false));
        List<String> groups = groupsOnDifferentShards(services.partitions());
        assertThat(groups).hasSize(2);
        TopicPartition tp = new TopicPartition("orders", 0);
        produce(tp, 3);

        for (String group : groups) {
            assertThat(agents.await(services.shareGroups().alterConfig(group,
                    Map.of("share.auto.offset.reset", "earliest"), false)).error()).isEqualTo(Errors.NONE);
            HeartbeatResponse joined = join(group, group + "-a", "orders");
            assertThat(joined.error()).isEqualTo(Errors.NONE);
            assertThat(joined.assignment()).containsKey(topic.id());

            SharePartitionKey key = new SharePartitionKey(group, topic.id(), 0);
            ShareService.Acquired first = acquire(tp, key, group + "-a");
            assertThat(first.recordCount()).isEqualTo(3);
            assertThat(first.ranges()).allSatisfy(r -> assertThat((int) r.deliveryCount()).isEqualTo(1));
            assertThat(acquire(tp, key, group + "-b").recordCount()).as("locked by a").isZero();
        }

        // Broker time passes the record lock: both groups' records come back, delivered twice.
        agents.advance(LOCK_MS + 1);
        for (String group : groups) {
            SharePartitionKey key = new SharePartitionKey(group, topic.id(), 0);
            ShareService.Acquired again = acquire(tp, key, group + "-b");
            assertThat(again.recordCount()).isEqualTo(3);
            assertThat(again.ranges()).allSatisfy(r -> assertThat((int) r.deliveryCount()).isEqualTo(2));
            assertThat(agents.await(services.shares().acknowledge(tp, key, group + "-b",
                    List.of(AckBatch.of(0, 2, AcknowledgeType.ACCEPT))))).isEqualTo(Errors.NONE);
        }

        // ...and the session of each group's member a ends on the shard of its group.
        agents.advance(SESSION_MS);
        for (String group : groups) {
            HeartbeatResponse late = agents.await(services.shareGroups().heartbeat(new HeartbeatRequest(group,
                    group + "-a", 1, null, null, "test", "/127.0.0.1")));
            assertThat(late.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
            assertThat(agents.await(services.shareOffsets().summary(tp,
                    new SharePartitionKey(group, topic.id(), 0))).startOffset()).isEqualTo(3);
        }
    }

    /**
     * An acquisition whose write takes long (a gateway's upstream round trip; here the share-state
     * agent held for 20 s of a 30 s lock) hands its member a whole lock from when the write is
     * durable and the answer can go out, not the 10 s the write left: the records stay locked past
     * the acquisition's own deadline, then come back once the restarted lock ends. Before, they
     * were another member's at 30 s, and the first member saw its lock run out 10 s after it could
     * see them (LockAndRenewIT's delivery count 3 where 2 was due, on the gateway).
     */
    @Test
    void shouldStartTheLockOfAnAcquisitionWhoseWriteTookLongOnceItIsDurable() throws Exception {
        TopicMetadata topic = agents.await(services.topics().create("slow-write", 1, Map.of(), false));
        TopicPartition tp = new TopicPartition("slow-write", 0);
        String group = "slow-write-group";
        assertThat(agents.await(services.shareGroups().alterConfig(group,
                Map.of("share.auto.offset.reset", "earliest"), false)).error()).isEqualTo(Errors.NONE);
        assertThat(join(group, "a", "slow-write").error()).isEqualTo(Errors.NONE);
        assertThat(join(group, "b", "slow-write").error()).isEqualTo(Errors.NONE);
        SharePartitionKey key = new SharePartitionKey(group, topic.id(), 0);
        // Loaded first (its load writes the share state too), then the records.
        assertThat(acquire(tp, key, "b").recordCount()).isZero();
        produce(tp, 3);

        agents.hold("pier-share-state");
        CompletableFuture<ShareService.Acquired> first = services.shares().acquire(tp, key, "a",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null);
        agents.runUntilIdle(); // acquired now, its write waiting for the held agent
        agents.advance(20_000);
        assertThat(first).as("not answered before the acquisition is durable").isNotDone();
        agents.release("pier-share-state");
        assertThat(agents.await(first).recordCount()).isEqualTo(3);

        agents.advance(LOCK_MS - 20_000 + 5_000);
        assertThat(acquire(tp, key, "b").recordCount()).as("past the acquisition's own deadline, still a's")
                .isZero();
        agents.advance(20_000);
        ShareService.Acquired again = acquire(tp, key, "b");
        assertThat(again.recordCount()).as("once the restarted lock ends").isEqualTo(3);
        assertThat(again.ranges()).allSatisfy(r -> assertThat((int) r.deliveryCount()).isEqualTo(2));
    }

    /**
     * A gateway's mirrors answer a new share-partition's first start offset (and a loaded one's
     * group settings) on the upstream client's thread, and the cover of the log that follows may
     * restart the log, which only its shard may touch. Run on the answering thread, a restart
     * deleted the segment a mirrored append on the shard was writing, and the node stopped on the
     * closed file (GatewayNemesisIT). Here the answer comes from the test, outside every duty
     * cycle: the cover must wait for the shard's turn.
     */
    @Test
    void shouldCoverTheLogOfAShareSourceOnItsShardWhicheverThreadAnsweredTheStartOffset() throws Exception {
        TopicMetadata topic = agents.await(services.topics().create("mirrored", 1, Map.of(), false));
        TopicPartition tp = new TopicPartition("mirrored", 0);
        produce(tp, 2);
        CompletableFuture<Long> startAnswer = new CompletableFuture<>();
        List<String> covers = new ArrayList<>();
        boolean[] answering = {false};
        services.shareLogSource(new ShareLogSource() {
            @Override
            public CompletableFuture<Long> initialStartOffset(Partition partition, Supplier<AutoOffsetReset> reset,
                    long nowWallMs) {
                return startAnswer;
            }

            @Override
            public CompletableFuture<Void> cover(Partition partition, long start) {
                covers.add((answering[0] ? "inside the answer" : "in a duty cycle") + " from " + start);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Long> endOffset(Partition partition) {
                return ShareLogSource.LOCAL.endOffset(partition);
            }
        });
        String group = "mirrored-group";
        assertThat(join(group, "a", "mirrored").error()).isEqualTo(Errors.NONE);
        SharePartitionKey key = new SharePartitionKey(group, topic.id(), 0);
        CompletableFuture<ShareService.Acquired> first = services.shares().acquire(tp, key, "a",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null);
        agents.runUntilIdle();
        assertThat(covers).as("nothing to cover before the start offset is known").isEmpty();

        answering[0] = true;
        startAnswer.complete(0L);
        answering[0] = false;
        agents.runUntilIdle();

        assertThat(covers).containsExactly("in a duty cycle from 0");
        agents.await(first);
        assertThat(acquire(tp, key, "a").recordCount() + agents.await(first).recordCount())
                .as("the share-partition, loaded, hands out the records from the start").isEqualTo(2);
    }

    /**
     * A heartbeat whose group's existence cannot be recorded here answers an error the client
     * retries after finding the coordinator again, never the write's own: kafka-clients takes
     * NOT_LEADER_OR_FOLLOWER on a heartbeat as fatal and the member never joins again. On a
     * gateway node woken from a pause, the group's state was served elsewhere by then
     * (GatewayNemesisIT: every consumer of the group stopped after a SIGCONT). Failed before: the
     * heartbeat completed with NotLeaderOrFollowerException.
     */
    @Test
    void shouldAnswerAHeartbeatWhoseGroupCannotBeRecordedHereWithARetriableCoordinatorError() throws Exception {
        broker.close();
        AtomicReference<RuntimeException> refusal =
                new AtomicReference<>();
        broker = new HandDrivenServices(dir.resolve("refusing"), SHARDS, null, Map.of(), FileIO.REAL,
                state -> new RefusingGroupRecords(state, refusal));
        agents = broker.agents;
        services = broker.services;
        agents.await(services.topics().create("orders", 1, Map.of(), false));

        refusal.set(new NotLeaderOrFollowerException(
                "the share state of group g-moved is not served by this gateway node"));
        HeartbeatResponse moved = join("g-moved", "a", "orders");
        assertThat(moved.error()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(moved.errorMessage()).contains("g-moved");

        refusal.set(new IllegalStateException("share state is not writable after an I/O error"));
        assertThat(join("g-broken", "a", "orders").error()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);

        refusal.set(null);
        assertThat(join("g-moved", "b", "orders").error()).as("recorded once the store takes it").isEqualTo(Errors.NONE);
    }

    /** A share-state store whose recordGroup fails with the exception set, if any. */
    private static final class RefusingGroupRecords extends ForwardingShareStateStore {
        private final AtomicReference<RuntimeException> refusal;

        RefusingGroupRecords(ShareStateStore store,
                AtomicReference<RuntimeException> refusal) {
            super(store);
            this.refusal = refusal;
        }

        @Override
        public CompletableFuture<Void> recordGroup(String groupId) {
            RuntimeException e = refusal.get();
            return e == null ? super.recordGroup(groupId) : CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A stand-in for the next coordinator (consumer groups, transactions): state per key, kept on
     * the shard the key hashes to, changed only by commands there and expired by a duty step.
     */
    private static final class PlaceholderCoordinator {
        private final Map<Shard, Map<String, Long>> deadlines = new HashMap<>();
        private final List<String> expired = new ArrayList<>();

        CompletableFuture<Integer> join(Shard shard, String key, long sessionMs) {
            return shard.call(() -> {
                Map<String, Long> owned = deadlines.computeIfAbsent(shard, s -> new HashMap<>());
                owned.put(key, shard.nowMs() + sessionMs);
                return shard.id();
            });
        }

        DutyStep expiry(Shard shard) {
            return new DutyStep() {
                @Override
                public int onCycle(long nowMs) {
                    Map<String, Long> owned = deadlines.getOrDefault(shard, Map.of());
                    List<String> due = new ArrayList<>();
                    owned.forEach((k, d) -> {
                        if (d <= nowMs) {
                            due.add(k);
                        }
                    });
                    due.forEach(k -> {
                        owned.remove(k);
                        expired.add(k + "@" + shard.id());
                    });
                    return due.size();
                }

                @Override
                public long nextDeadlineMs() {
                    return deadlines.getOrDefault(shard, Map.of()).values().stream().min(Long::compare)
                            .orElse(Long.MAX_VALUE);
                }
            };
        }
    }

    @Test
    void shouldPlaceANewCoordinatorsKeysOnTheShardOfTheirShareGroupAndExpireThemThere() throws Exception {
        PartitionRegistry partitions = services.partitions();
        PlaceholderCoordinator coordinator = new PlaceholderCoordinator();
        Shard[] shards = partitions.shards();
        for (Shard shard : shards) {
            shard.addStep(coordinator.expiry(shard));
        }
        List<String> groups = groupsOnDifferentShards(partitions);

        List<Integer> placed = new ArrayList<>();
        for (String group : groups) {
            placed.add(agents.await(coordinator.join(partitions.shardForKey(group), group, 10_000)));
        }
        agents.advance(9_999);
        assertThat(coordinator.expired).isEmpty();
        agents.advance(1);

        assertThat(placed).doesNotHaveDuplicates();
        assertThat(coordinator.expired).containsExactlyInAnyOrder(
                groups.get(0) + "@" + placed.get(0), groups.get(1) + "@" + placed.get(1));
    }

    /** Two partitions of {@code topic} that live on the same shard. */
    private List<TopicPartition> twoOnOneShard(String topic, int partitions) {
        Map<Shard, TopicPartition> first = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            TopicPartition earlier = first.putIfAbsent(services.partitions().shardFor(tp), tp);
            if (earlier != null) {
                return List.of(earlier, tp);
            }
        }
        throw new IllegalStateException("no two partitions share a shard");
    }

    private static String flusherOf(Shard shard) {
        return "pier-flusher-" + shard.id();
    }

    @Test
    void shouldAnswerAProduceOnlyAfterItsFlushAndServeAFetchOfAnotherPartitionMeanwhile() throws Exception {
        agents.await(services.topics().create("flushed", SHARDS + 1, Map.of(), false));
        List<TopicPartition> pair = twoOnOneShard("flushed", SHARDS + 1);
        TopicPartition busy = pair.get(0);
        TopicPartition other = pair.get(1);
        produce(other, 1);

        // Given the shard's flusher inside a long fsync (held), and a produce waiting for it
        String flusher = flusherOf(services.partitions().shardFor(busy));
        agents.hold(flusher);
        CompletableFuture<Logs.Appended> reply = services.logs().append(busy, MemoryRecords.withRecords(
                Compression.NONE, new SimpleRecord(clock.wallMs(), null, "slow".getBytes())));
        agents.runUntilIdle();
        assertThat(reply).as("not answered before the flusher's completion").isNotDone();

        // When a fetch of another partition on the same shard comes, it is answered
        Logs.Read read = agents.await(services.logs().read(other, 0, 1 << 20, null));
        assertThat(read.error()).isEqualTo(Errors.NONE);
        assertThat(read.records().sizeInBytes()).isPositive();
        assertThat(read.highWatermark()).isEqualTo(1);
        // ...and readers of the busy partition do not see the unforced record
        assertThat(agents.await(services.logs().read(busy, 0, 1 << 20, null)).highWatermark()).isZero();
        assertThat(reply).isNotDone();

        // Then the produce is answered once the flusher has run and the shard has heard of it
        agents.release(flusher);
        assertThat(agents.await(reply).error()).isEqualTo(Errors.NONE);
        assertThat(agents.await(services.logs().read(busy, 0, 1 << 20, null)).highWatermark()).isEqualTo(1);
    }

    @Test
    void shouldRemoveADeletedTopicsFilesOnlyOnceItsFlushInFlightIsBack() throws Exception {
        agents.await(services.topics().create("doomed", 1, Map.of(), false));
        TopicPartition tp = new TopicPartition("doomed", 0);
        String flusher = flusherOf(services.partitions().shardFor(tp));
        agents.hold(flusher);
        CompletableFuture<Logs.Appended> reply = services.logs().append(tp, MemoryRecords.withRecords(
                Compression.NONE, new SimpleRecord(clock.wallMs(), null, "last".getBytes())));
        agents.runUntilIdle();

        // When the topic is deleted while the flush of its partition is in flight
        CompletableFuture<TopicMetadata> deleted = services.topics().delete("doomed");
        agents.runUntilIdle();
        assertThat(deleted).as("its files wait for the flusher").isNotDone();
        assertThat(dir.resolve("logs").resolve("doomed-0")).exists();

        // Then once the flush is back the files go, and a topic of the same name starts empty
        agents.release(flusher);
        agents.await(deleted);
        assertThat(agents.await(reply).error()).as("it was forced before the delete").isEqualTo(Errors.NONE);
        assertThat(dir.resolve("logs").resolve("doomed-0")).doesNotExist();
        agents.await(services.topics().create("doomed", 1, Map.of(), false));
        assertThat(agents.await(services.logs().offsetFor(tp, -1L)).offset()).isZero();
    }
}
