package io.pier.protocol;

import io.pier.service.Logs;
import io.pier.service.TransactionCoordinators;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.state.TransactionRecord;
import io.pier.state.TransactionStore;
import io.pier.txn.ProducerIdAndEpoch;
import io.pier.txn.TransactionConfig;
import io.pier.txn.TransactionCoordinator;
import io.pier.txn.TransactionDescription;
import io.pier.txn.TransactionFilter;
import io.pier.txn.TransactionListing;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

/** The transaction APIs over one coordinator whose store and markers complete at once. */
class TransactionHandlersTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);

    private final ManualClock clock = new ManualClock(1_000_000);
    private final TransactionCoordinator coordinator = new TransactionCoordinator(TransactionConfig.DEFAULTS, clock,
            () -> CompletableFuture.completedFuture(77L), new ImmediateStore(),
            (pid, epoch, coordinatorEpoch, commit, partitions, groups) -> CompletableFuture.completedFuture(null),
            Runnable::run, 0);
    private final TransactionHandlers handlers = new TransactionHandlers(new OneCoordinator(), Access.ALLOW_ALL);

    static final class ImmediateStore implements TransactionStore {
        private final Map<String, TransactionRecord> records = new HashMap<>();

        @Override
        public CompletableFuture<Void> write(TransactionRecord record) {
            records.put(record.transactionalId(), record);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> remove(String transactionalId) {
            records.remove(transactionalId);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public Map<String, TransactionRecord> transactions() {
            return Map.copyOf(records);
        }
    }

    final class OneCoordinator implements TransactionCoordinators {
        @Override
        public CompletableFuture<ProducerIdAndEpoch> initProducerId(String id, int timeoutMs, long pid, short epoch) {
            return coordinator.initProducerId(id, timeoutMs, pid, epoch);
        }

        @Override
        public CompletableFuture<Errors> addPartitions(String id, long pid, short epoch,
                Collection<TopicPartition> partitions) {
            return coordinator.addPartitions(id, pid, epoch, partitions);
        }

        @Override
        public short transactionVersion() {
            return TransactionConfig.DEFAULTS.transactionVersion();
        }

        @Override
        public CompletableFuture<Errors> verifyPartition(String id, long pid, short epoch, TopicPartition tp) {
            return coordinator.verifyOrAddPartition(id, pid, epoch, tp, false);
        }

        @Override
        public CompletableFuture<Logs.Appended> appendTransactional(String id, long pid, short epoch,
                TopicPartition tp, MemoryRecords records, boolean tv2) {
            throw new UnsupportedOperationException("Produce is not served by these handlers");
        }

        @Override
        public CompletableFuture<Errors> addOffsets(String id, long pid, short epoch, String groupId) {
            return coordinator.addOffsets(id, pid, epoch, groupId);
        }

        @Override
        public CompletableFuture<Errors> verifyOrAddGroup(String id, long pid, short epoch, String groupId,
                boolean tv2) {
            return coordinator.verifyOrAddGroup(id, pid, epoch, groupId, tv2);
        }

        @Override
        public CompletableFuture<ProducerIdAndEpoch> endTxn(String id, long pid, short epoch, boolean commit,
                boolean tv2) {
            return coordinator.endTxn(id, pid, epoch, commit, tv2);
        }

        @Override
        public CompletableFuture<Optional<TransactionDescription>> describe(String id) {
            return CompletableFuture.completedFuture(coordinator.describe(id));
        }

        @Override
        public CompletableFuture<List<TransactionListing>> list(TransactionFilter filter) {
            return CompletableFuture.completedFuture(coordinator.list(filter));
        }
    }

    private static ApiRequest request(ApiKeys key, short version, AbstractRequest body) {
        return new ApiRequest(new RequestHeader(key, version, "test", 1), body, null);
    }

    private InitProducerIdResponse init(short version) {
        InitProducerIdRequest body = new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                .setTransactionalId("tx").setTransactionTimeoutMs(60_000)).build(version);
        return (InitProducerIdResponse) handlers.initProducerId(request(ApiKeys.INIT_PRODUCER_ID, version, body)).join();
    }

    private Errors addPartition(short version, short epoch) {
        AddPartitionsToTxnRequest body = AddPartitionsToTxnRequest.Builder.forClient("tx", 77, epoch, List.of(P0))
                .build(version);
        AddPartitionsToTxnResponse r = (AddPartitionsToTxnResponse) handlers.addPartitionsToTxn(
                request(ApiKeys.ADD_PARTITIONS_TO_TXN, version, body)).join();
        return r.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID).get(P0);
    }

    @Test
    void shouldAnswerAFencedOldProducerWithTheErrorItsVersionKnows() {
        assertThat(init((short) 4).data().producerEpoch()).isEqualTo((short) 0);
        assertThat(init((short) 4).data().producerEpoch()).isEqualTo((short) 1);

        assertThat(addPartition((short) 1, (short) 0)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(addPartition((short) 3, (short) 0)).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(addPartition((short) 3, (short) 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldReturnTheBumpedEpochFromEndTxnV5AndDescribeAndListTheTransaction() {
        init((short) 5);
        assertThat(addPartition((short) 3, (short) 0)).isEqualTo(Errors.NONE);

        DescribeTransactionsResponse described = (DescribeTransactionsResponse) handlers.describeTransactions(
                request(ApiKeys.DESCRIBE_TRANSACTIONS, (short) 0, new DescribeTransactionsRequest.Builder(
                        new DescribeTransactionsRequestData().setTransactionalIds(List.of("tx", "nope")))
                        .build((short) 0))).join();
        assertThat(described.data().transactionStates()).hasSize(2);
        assertThat(described.data().transactionStates().get(0).transactionState()).isEqualTo("Ongoing");
        assertThat(described.data().transactionStates().get(0).topics().find("orders").partitions())
                .containsExactly(0);
        assertThat(described.data().transactionStates().get(1).errorCode())
                .isEqualTo(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());

        ListTransactionsResponse listed = (ListTransactionsResponse) handlers.listTransactions(
                request(ApiKeys.LIST_TRANSACTIONS, (short) 1, new ListTransactionsRequest.Builder(
                        new ListTransactionsRequestData().setStateFilters(List.of("Ongoing", "Bogus")))
                        .build((short) 1))).join();
        assertThat(listed.data().transactionStates()).extracting(s -> s.transactionalId()).containsExactly("tx");
        assertThat(listed.data().unknownStateFilters()).containsExactly("Bogus");

        EndTxnRequest end = new EndTxnRequest.Builder(new EndTxnRequestData().setTransactionalId("tx")
                .setProducerId(77).setProducerEpoch((short) 0).setCommitted(true), true).build((short) 5);
        EndTxnResponse r = (EndTxnResponse) handlers.endTxn(request(ApiKeys.END_TXN, (short) 5, end)).join();
        assertThat(r.data().errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(r.data().producerId()).isEqualTo(77);
        assertThat(r.data().producerEpoch()).isEqualTo((short) 1);
    }
}
