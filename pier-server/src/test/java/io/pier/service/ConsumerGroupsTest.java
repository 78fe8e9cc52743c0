package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicProtocol;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Consumer groups on hand-driven shards and a manual clock: a parked JoinGroup is answered by the
 * shard's timer when the initial rebalance delay has passed on the clock, and committed offsets
 * outlive the services.
 */
class ConsumerGroupsTest {
    private static final int SHARDS = 3;

    @TempDir
    Path dir;

    private static ClassicJoin join(String memberId) {
        return new ClassicJoin("g", memberId, null, "client", "/127.0.0.1", 10_000, 30_000, "consumer",
                List.of(new ClassicProtocol("range", new byte[] {1})), true, true);
    }

    @Test
    void shouldParkAJoinUntilTheInitialDelayHasPassedOnTheClock() throws Exception {
        try (HandDrivenServices broker = new HandDrivenServices(dir, SHARDS)) {
            ConsumerGroups groups = broker.services.consumerGroups();
            // Given a member that was given its id
            ClassicJoinResult first = broker.agents.await(groups.join(join("")));
            assertThat(first.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);

            // When it joins with it, the answer waits for the initial delay (Kafka's 3 s)
            CompletableFuture<ClassicJoinResult> joined = groups.join(join(first.memberId()));
            broker.agents.runUntilIdle();
            broker.agents.advance(2_999);
            assertThat(joined).isNotDone();

            // Then once the clock reaches it, the shard's timer completes the join phase
            broker.agents.advance(1);
            assertThat(joined).isDone();
            assertThat(joined.get().generationId()).isEqualTo(1);
            assertThat(joined.get().leaderId()).isEqualTo(first.memberId());
        }
    }

    @Test
    void shouldKeepCommittedOffsetsAcrossARestartOfTheServices() throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        try (HandDrivenServices broker = new HandDrivenServices(dir, SHARDS)) {
            broker.agents.await(broker.services.topics().create("t", 1, Map.of(), false));
            Map<TopicPartition, Errors> result = broker.agents.await(broker.services.consumerGroups().commit(
                    new ConsumerGroups.CommitRequest("g", -1, "", null, (short) 9,
                            Map.of(tp, new ConsumerGroups.Offset(42, -1, "meta")))));
            assertThat(result).containsEntry(tp, Errors.NONE);
        }
        try (HandDrivenServices broker = new HandDrivenServices(dir, SHARDS)) {
            ConsumerGroups.Fetched fetched = broker.agents.await(broker.services.consumerGroups().fetch("g", null));
            assertThat(fetched.offsets().get(tp).offset()).isEqualTo(42);
            assertThat(fetched.offsets().get(tp).metadata()).isEqualTo("meta");
            // the group is back (Empty) with its offsets, so Admin can find and delete it
            assertThat(broker.agents.await(broker.services.consumerGroups().delete("g"))).isEqualTo(Errors.NONE);
            assertThat(broker.agents.await(broker.services.consumerGroups().fetch("g", null)).offsets()).isEmpty();
        }
    }

    @Test
    void shouldKeepTransactionalOffsetsPendingAcrossARestartUntilTheCommitMarker() throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        try (HandDrivenServices broker = new HandDrivenServices(dir, SHARDS)) {
            // Given an offset committed inside producer 7's transaction
            broker.agents.await(broker.services.topics().create("t", 1, Map.of(), false));
            Map<TopicPartition, Errors> result = broker.agents.await(
                    broker.services.consumerGroups().commitTransactional(new ConsumerGroups.CommitRequest("g", -1, "",
                            null, (short) 8, Map.of(tp, new ConsumerGroups.Offset(42, -1, "tx"))), 7L));
            assertThat(result).containsEntry(tp, Errors.NONE);
        }
        try (HandDrivenServices broker = new HandDrivenServices(dir, SHARDS)) {
            // Then after a restart it is still pending: not fetched, and unstable for require_stable
            ConsumerGroups groups = broker.services.consumerGroups();
            assertThat(broker.agents.await(groups.fetch("g", null)).offsets()).isEmpty();
            assertThat(groups.unstablePartitions("g")).containsExactly(tp);

            // When the commit marker reaches the group, it is the group's committed offset
            broker.agents.await(groups.completeTransaction("g", 7L, true));
            assertThat(broker.agents.await(groups.fetch("g", null)).offsets().get(tp).offset()).isEqualTo(42);
            assertThat(groups.unstablePartitions("g")).isEmpty();
        }
    }
}
