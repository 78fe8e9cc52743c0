package io.pier.protocol;

import io.pier.service.TransactionCoordinators;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.service.ConsumerGroups;
import io.pier.service.HandDrivenServices;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TxnOffsetCommit over hand-driven services and the coordinator of {@link TransactionHandlersTest}. */
class TxnOffsetCommitHandlerTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    @TempDir
    Path dir;

    private final TransactionHandlersTest txns = new TransactionHandlersTest();

    private static ApiRequest txnOffsetCommit(short version, short epoch) {
        TxnOffsetCommitRequestData data = new TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("g")
                .setProducerId(77).setProducerEpoch(epoch).setGenerationIdOrMemberEpoch(-1).setMemberId("")
                .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(TP.topic())
                        .setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                .setPartitionIndex(TP.partition()).setCommittedOffset(42).setCommittedMetadata("m")))));
        TxnOffsetCommitRequest body = TxnOffsetCommitRequest.Builder.forTopicNames(data, false).build(version);
        return new ApiRequest(new RequestHeader(ApiKeys.TXN_OFFSET_COMMIT, version, "c", 1), body, null);
    }

    private static Errors errorOf(TxnOffsetCommitResponse r) {
        return Errors.forCode(r.data().topics().get(0).partitions().get(0).errorCode());
    }

    @Test
    void shouldKeepTheOffsetPendingOnlyWhenTheGroupIsInTheTransaction() throws Exception {
        try (HandDrivenServices broker = new HandDrivenServices(dir, 2)) {
            broker.agents.await(broker.services.topics().create("t", 1, Map.of(), false));
            ConsumerGroups groups = broker.services.consumerGroups();
            TransactionCoordinators coordinators = txns.new OneCoordinator();
            TxnOffsetCommitHandler handler = new TxnOffsetCommitHandler(coordinators, groups, Access.ALLOW_ALL);
            coordinators.initProducerId("tx", 60_000, -1, (short) -1).join();

            // Given a TV1 producer that has not added the group: refused, nothing stored
            TxnOffsetCommitResponse refused = (TxnOffsetCommitResponse) broker.agents.await(
                    handler.handle(txnOffsetCommit((short) 3, (short) 0)));
            assertThat(errorOf(refused)).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(groups.unstablePartitions("g")).isEmpty();

            // When it has, the offset is pending, not committed
            assertThat(coordinators.addOffsets("tx", 77, (short) 0, "g").join()).isEqualTo(Errors.NONE);
            CompletableFuture<?> done = handler.handle(txnOffsetCommit((short) 3, (short) 0));
            TxnOffsetCommitResponse ok = (TxnOffsetCommitResponse) broker.agents.await(done);
            assertThat(errorOf(ok)).isEqualTo(Errors.NONE);
            assertThat(groups.unstablePartitions("g")).containsExactly(TP);
            assertThat(broker.agents.await(groups.fetch("g", null)).offsets()).isEmpty();

            // And a fenced epoch is INVALID_PRODUCER_EPOCH for a v2 client
            TxnOffsetCommitResponse fenced = (TxnOffsetCommitResponse) broker.agents.await(
                    handler.handle(txnOffsetCommit((short) 2, (short) 5)));
            assertThat(errorOf(fenced)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        }
    }
}
