package io.pier.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.JumpingClock;
import io.pier.common.ManualClock;
import io.pier.state.TransactionRecord;
import io.pier.state.TransactionStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * The coordinator driven by hand: the store and the markers complete only when the test says so,
 * and continuations run at once on the test thread (the shard).
 */
class TransactionCoordinatorTest {
    private static final String TXN = "txn-a";
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition Q0 = new TopicPartition("audit", 0);

    private final ManualClock clock = new ManualClock(1_000_000);
    private final RecordingStore store = new RecordingStore();
    private final RecordingMarkers markers = new RecordingMarkers();
    private long nextPid = 1000;
    private TransactionCoordinator coordinator = newCoordinator();

    private TransactionCoordinator newCoordinator() {
        return new TransactionCoordinator(TransactionConfig.DEFAULTS, clock,
                () -> CompletableFuture.completedFuture(nextPid++), store, markers, Runnable::run, 3);
    }

    /** Every write is durable at once unless {@link #hold} says otherwise. */
    static final class RecordingStore implements TransactionStore {
        final Map<String, TransactionRecord> durable = new HashMap<>();
        final List<TransactionRecord> written = new ArrayList<>();
        /** Writes not durable yet, in order: each makes its record durable and completes it. */
        final List<Runnable> pending = new ArrayList<>();
        boolean hold;

        @Override
        public CompletableFuture<Void> write(TransactionRecord record) {
            written.add(record);
            CompletableFuture<Void> f = new CompletableFuture<>();
            Runnable durableNow = () -> {
                durable.put(record.transactionalId(), record);
                f.complete(null);
            };
            if (hold) {
                pending.add(durableNow);
            } else {
                durableNow.run();
            }
            return f;
        }

        void releaseAll() {
            hold = false;
            List<Runnable> p = List.copyOf(pending);
            pending.clear();
            p.forEach(Runnable::run);
        }

        @Override
        public CompletableFuture<Void> remove(String transactionalId) {
            durable.remove(transactionalId);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public Map<String, TransactionRecord> transactions() {
            return Map.copyOf(durable);
        }

        TransactionState state(String id) {
            return TransactionState.fromId(durable.get(id).state());
        }
    }

    record Marker(long producerId, short epoch, int coordinatorEpoch, boolean commit, Set<TopicPartition> partitions,
            Set<String> groupIds) {}

    /** Records each marker write; each completes when the test completes it. */
    static final class RecordingMarkers implements TransactionMarkers {
        final List<Marker> calls = new ArrayList<>();
        final List<CompletableFuture<Void>> results = new ArrayList<>();

        @Override
        public CompletableFuture<Void> write(long producerId, short producerEpoch, int coordinatorEpoch,
                boolean commit, Collection<TopicPartition> partitions, Collection<String> groupIds) {
            calls.add(new Marker(producerId, producerEpoch, coordinatorEpoch, commit, Set.copyOf(partitions),
                    Set.copyOf(groupIds)));
            CompletableFuture<Void> f = new CompletableFuture<>();
            results.add(f);
            return f;
        }

        void completeLast() {
            results.get(results.size() - 1).complete(null);
        }

        void failLast() {
            results.get(results.size() - 1).completeExceptionally(new java.io.IOException("partition gone"));
        }
    }

    private ProducerIdAndEpoch init() {
        return coordinator.initProducerId(TXN, 60_000, -1, (short) -1).join();
    }

    private ProducerIdAndEpoch ongoing(Collection<TopicPartition> partitions) {
        ProducerIdAndEpoch p = init();
        assertThat(coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(), partitions).join())
                .isEqualTo(Errors.NONE);
        return p;
    }

    private TransactionState state() {
        return coordinator.describe(TXN).orElseThrow().state();
    }

    @Test
    void shouldGiveANewIdEpochZeroAndBumpTheEpochOnEachInitFencingTheOldProducer() {
        // Given a new transactional id
        ProducerIdAndEpoch first = init();
        assertThat(first).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, 1000, (short) 0));
        assertThat(store.state(TXN)).isEqualTo(TransactionState.EMPTY);

        // When a second producer initialises the same id
        ProducerIdAndEpoch second = init();

        // Then it has the same id, epoch + 1, and the first one is fenced
        assertThat(second).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, 1000, (short) 1));
        assertThat(coordinator.addPartitions(TXN, 1000, (short) 0, List.of(P0)).join())
                .isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(coordinator.addPartitions(TXN, 999, (short) 1, List.of(P0)).join())
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(coordinator.addPartitions("other", 1000, (short) 1, List.of(P0)).join())
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void shouldRefuseATimeoutAboveTheMaximumAndAnEmptyId() {
        assertThat(coordinator.initProducerId(TXN, 900_001, -1, (short) -1).join().error())
                .isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
        assertThat(coordinator.initProducerId(TXN, 0, -1, (short) -1).join().error())
                .isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
        assertThat(coordinator.initProducerId("", 1000, -1, (short) -1).join().error())
                .isEqualTo(Errors.INVALID_REQUEST);
        assertThat(coordinator.initProducerId(TXN, 900_000, -1, (short) -1).join().error()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAbortAnOngoingTransactionUnderABumpedEpochWhenANewProducerInitialises() {
        // Given an ongoing transaction on P0
        ProducerIdAndEpoch p = ongoing(List.of(P0));

        // When a new producer initialises the id
        ProducerIdAndEpoch during = init();

        // Then it is told to retry while the old transaction is aborted under epoch 1
        assertThat(during.error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(markers.calls).containsExactly(new Marker(p.producerId(), (short) 1, 3, false, Set.of(P0), Set.of()));
        assertThat(store.state(TXN)).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(init().error()).as("still aborting").isEqualTo(Errors.CONCURRENT_TRANSACTIONS);

        // When the markers are durable, the retry gets epoch 2
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_ABORT);
        assertThat(init()).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, p.producerId(), (short) 2));
    }

    @Test
    void shouldMoveToANewProducerIdWhenTheEpochIsExhausted() {
        // Given an id whose epoch is one below the last usable one
        store.durable.put(TXN, new TransactionRecord(TXN, 7, -1, -1, (short) 32766, (short) -1, 60_000,
                TransactionState.COMPLETE_COMMIT.id(), Set.of(), Set.of(), -1, clock.wallMs(), (short) 1));
        coordinator.recover(store.transactions().values());

        // When a producer initialises it
        ProducerIdAndEpoch p = init();

        // Then it gets a new producer id with epoch 0
        assertThat(p).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, 1000, (short) 0));
        assertThat(store.durable.get(TXN).prevProducerId()).isEqualTo(7);
    }

    @Test
    void shouldCommitWritingMarkersToEveryPartitionAndGroupThenComplete() {
        // Given a transaction on two topics that also commits offsets of a group
        ProducerIdAndEpoch p = ongoing(List.of(P0, Q0));
        assertThat(coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(), List.of(P1)).join())
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.addOffsets(TXN, p.producerId(), p.producerEpoch(), "billing").join())
                .isEqualTo(Errors.NONE);
        assertThat(store.state(TXN)).isEqualTo(TransactionState.ONGOING);

        // When the producer commits
        ProducerIdAndEpoch end = coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join();

        // Then the answer comes once PREPARE_COMMIT is durable, and markers go to every partition and the group
        assertThat(end.error()).isEqualTo(Errors.NONE);
        assertThat(store.state(TXN)).isEqualTo(TransactionState.PREPARE_COMMIT);
        assertThat(markers.calls).containsExactly(
                new Marker(p.producerId(), p.producerEpoch(), 3, true, Set.of(P0, P1, Q0), Set.of("billing")));

        // And while the markers are written, the next transaction's add waits (parked, not refused)
        CompletableFuture<Errors> next = coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(),
                List.of(P0));
        assertThat(next).isNotDone();
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join().error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), false, false).join().error())
                .isEqualTo(Errors.INVALID_TXN_STATE);

        // When they are durable, the transaction is complete, emptied, and a new one may start
        markers.completeLast();
        assertThat(store.written.get(store.written.size() - 2).state())
                .isEqualTo(TransactionState.COMPLETE_COMMIT.id());
        assertThat(store.written.get(store.written.size() - 2).partitions()).isEmpty();
        // And the parked add then opens the next transaction
        assertThat(next.join()).isEqualTo(Errors.NONE);
        assertThat(store.state(TXN)).isEqualTo(TransactionState.ONGOING);
        assertThat(store.durable.get(TXN).partitions()).containsExactly(P0);
    }

    @Test
    void shouldAbortWritingAbortMarkersAndAnswerNoneToARetryAfterCompletion() {
        // Given an aborted transaction, complete
        ProducerIdAndEpoch p = ongoing(List.of(P1));
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), false, false).join().error())
                .isEqualTo(Errors.NONE);
        assertThat(markers.calls).containsExactly(new Marker(p.producerId(), p.producerEpoch(), 3, false, Set.of(P1),
                Set.of()));
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_ABORT);

        // Then a retried abort is answered NONE, a commit is refused, and no marker is written again
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), false, false).join().error())
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join().error())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(markers.calls).hasSize(1);
    }

    @Test
    void shouldAnswerNoneToARetriedCommitAndRefuseEndingAnEmptyTransaction() {
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join();
        markers.completeLast();

        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join().error())
                .isEqualTo(Errors.NONE);
        ProducerIdAndEpoch next = init();
        assertThat(coordinator.endTxn(TXN, next.producerId(), next.producerEpoch(), true, false).join().error())
                .as("EMPTY under TV1").isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(coordinator.endTxn("unknown", 1, (short) 0, true, false).join().error())
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void shouldParkTheProducersNextAddWhileAChangeIsBeingWritten() {
        // Given an id whose next state write is not durable yet
        ProducerIdAndEpoch p = init();
        store.hold = true;
        CompletableFuture<Errors> add = coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(), List.of(P0));

        // Then nothing is answered yet: the producer's next add waits for the write, another
        // producer is told to retry
        assertThat(add).isNotDone();
        CompletableFuture<Errors> second = coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(),
                List.of(P1));
        CompletableFuture<Errors> third = coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(),
                List.of(Q0));
        assertThat(second).isNotDone();
        assertThat(third).isNotDone();
        assertThat(coordinator.initProducerId(TXN, 1000, -1, (short) -1).join().error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        int writesBefore = store.written.size();

        // When the write is durable, the first one is answered, then the parked two are written
        // together, in one more write
        store.releaseAll();
        assertThat(add.join()).isEqualTo(Errors.NONE);
        assertThat(second.join()).isEqualTo(Errors.NONE);
        assertThat(third.join()).isEqualTo(Errors.NONE);
        assertThat(store.written).hasSize(writesBefore + 1);
        assertThat(state()).isEqualTo(TransactionState.ONGOING);
        assertThat(store.durable.get(TXN).partitions()).containsExactlyInAnyOrder(P0, P1, Q0);
    }

    @Test
    void shouldAnswerAParkedAddConcurrentTransactionsWhenTheMarkersFail() {
        // Given a commit whose markers are being written, and the producer's next add parked
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join().error())
                .isEqualTo(Errors.NONE);
        CompletableFuture<Errors> next = coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(),
                List.of(P1));
        assertThat(next).isNotDone();

        // When the markers cannot be written, the add is told to retry (the markers are retried later)
        markers.failLast();
        assertThat(next.join()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(store.state(TXN)).isEqualTo(TransactionState.PREPARE_COMMIT);
    }

    @Test
    void shouldAbortATimedOutTransactionWithABumpedEpochOnTheManualClock() {
        // Given a transaction with a 60 s timeout
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(clock.wallMs() + 60_000);

        // When 59 s pass, nothing happens
        clock.advance(59_999);
        assertThat(coordinator.onDeadlines()).isZero();
        assertThat(markers.calls).isEmpty();

        // When the timeout passes, it is aborted under epoch + 1
        clock.advance(1);
        assertThat(coordinator.onDeadlines()).isEqualTo(1);
        assertThat(markers.calls).containsExactly(new Marker(p.producerId(), (short) 1, 3, false, Set.of(P0),
                Set.of()));
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_ABORT);

        // Then the old producer is fenced
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join().error())
                .isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void shouldRetryMarkersThatFailedAfterTheBackoff() {
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join();
        markers.results.get(0).completeExceptionally(new RuntimeException("partition unavailable"));
        assertThat(store.state(TXN)).isEqualTo(TransactionState.PREPARE_COMMIT);

        clock.advance(TransactionConfig.DEFAULTS.markerRetryBackoffMs());
        coordinator.onDeadlines();
        assertThat(markers.calls).hasSize(2);
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }

    @Test
    void shouldRetryFailedMarkersAfterTheBackoffWhateverTheWallClockDoes() {
        // Given a coordinator on a clock whose wall time can step, and markers that failed
        JumpingClock jumping = new JumpingClock(1_000_000);
        coordinator = new TransactionCoordinator(TransactionConfig.DEFAULTS, jumping,
                () -> CompletableFuture.completedFuture(nextPid++), store, markers, Runnable::run, 3);
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join();
        markers.results.get(0).completeExceptionally(new RuntimeException("partition unavailable"));
        long backoff = TransactionConfig.DEFAULTS.markerRetryBackoffMs();

        // When the wall clock steps an hour back, the retry still comes after the backoff
        jumping.stepWall(-3_600_000);
        assertThat(coordinator.nextDeadlineMs()).isEqualTo(jumping.wallMs() + backoff);
        jumping.advance(backoff - 1);
        coordinator.onDeadlines();
        assertThat(markers.calls).hasSize(1);
        jumping.advance(1);
        coordinator.onDeadlines();
        assertThat(markers.calls).hasSize(2);

        // And when they fail again and the wall clock steps an hour on, not before the backoff
        markers.results.get(1).completeExceptionally(new RuntimeException("still unavailable"));
        jumping.stepWall(3_600_000);
        coordinator.onDeadlines();
        assertThat(markers.calls).hasSize(2);
        jumping.advance(backoff);
        coordinator.onDeadlines();
        assertThat(markers.calls).hasSize(3);
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }

    @Test
    void shouldBumpTheEpochOnEveryEndTxnUnderTransactionVersion2() {
        // Given a TV2 transaction whose partition was added implicitly by a produce
        ProducerIdAndEpoch p = init();
        assertThat(coordinator.verifyOrAddPartition(TXN, p.producerId(), p.producerEpoch(), P0, true).join())
                .isEqualTo(Errors.NONE);

        // When it commits
        ProducerIdAndEpoch end = coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, true).join();

        // Then the answer carries epoch + 1, and so do the markers
        assertThat(end).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, p.producerId(), (short) 1));
        assertThat(markers.calls).containsExactly(new Marker(p.producerId(), (short) 1, 3, true, Set.of(P0),
                Set.of()));
        markers.completeLast();

        // And a retry with the old epoch gets the same answer, the old epoch is fenced otherwise
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, true).join()).isEqualTo(end);
        assertThat(coordinator.verifyOrAddPartition(TXN, p.producerId(), p.producerEpoch(), P0, true).join())
                .isEqualTo(Errors.PRODUCER_FENCED);

        // And the next transaction goes on under epoch 1, its end bumps to 2
        assertThat(coordinator.verifyOrAddPartition(TXN, p.producerId(), (short) 1, P1, true).join())
                .isEqualTo(Errors.NONE);
        ProducerIdAndEpoch abort = coordinator.endTxn(TXN, p.producerId(), (short) 1, false, true).join();
        assertThat(abort).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, p.producerId(), (short) 2));
        assertThat(markers.calls.get(1)).isEqualTo(new Marker(p.producerId(), (short) 2, 3, false, Set.of(P1),
                Set.of()));
    }

    @Test
    void shouldHandOverToANewProducerIdWhenATv2EndTxnExhaustsTheEpoch() {
        // Given a TV2 transaction at the last bumpable epoch
        store.durable.put(TXN, new TransactionRecord(TXN, 7, -1, -1, (short) 32766, (short) 32765, 60_000,
                TransactionState.ONGOING.id(), Set.of(P0), Set.of(), clock.wallMs(), clock.wallMs(), (short) 2));
        coordinator.recover(store.transactions().values());

        // When it commits, the answer is a new producer id at epoch 0; the markers carry the old id, epoch + 1
        ProducerIdAndEpoch end = coordinator.endTxn(TXN, 7, (short) 32766, true, true).join();
        assertThat(end).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, 1000, (short) 0));
        assertThat(markers.calls).containsExactly(new Marker(7, Short.MAX_VALUE, 3, true, Set.of(P0), Set.of()));
        markers.completeLast();

        // Then the id goes on as the new producer, and a retry under the old one gets the same answer
        assertThat(store.durable.get(TXN).producerId()).isEqualTo(1000);
        assertThat(store.durable.get(TXN).prevProducerId()).isEqualTo(7);
        assertThat(coordinator.endTxn(TXN, 7, (short) 32766, true, true).join()).isEqualTo(end);
        assertThat(coordinator.verifyOrAddPartition(TXN, 1000, (short) 0, P1, true).join()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAbortAnEmptyTransactionUnderTv2ButNotCommitIt() {
        ProducerIdAndEpoch p = init();
        assertThat(coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, true).join().error())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        ProducerIdAndEpoch abort = coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), false, true).join();
        assertThat(abort).isEqualTo(new ProducerIdAndEpoch(Errors.NONE, p.producerId(), (short) 1));
    }

    @Test
    void shouldOnlyVerifyUnderTv1() {
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        assertThat(coordinator.verifyOrAddPartition(TXN, p.producerId(), p.producerEpoch(), P0, false).join())
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.verifyOrAddPartition(TXN, p.producerId(), p.producerEpoch(), P1, false).join())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(coordinator.describe(TXN).orElseThrow().partitions()).containsExactly(P0);
        assertThat(coordinator.verifyOrAddGroup(TXN, p.producerId(), p.producerEpoch(), "g", false).join())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(coordinator.addOffsets(TXN, p.producerId(), p.producerEpoch(), "g").join()).isEqualTo(Errors.NONE);
        assertThat(coordinator.verifyOrAddGroup(TXN, p.producerId(), p.producerEpoch(), "g", false).join())
                .isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAddAGroupImplicitlyUnderTv2() {
        ProducerIdAndEpoch p = init();
        assertThat(coordinator.verifyOrAddGroup(TXN, p.producerId(), p.producerEpoch(), "g", true).join())
                .isEqualTo(Errors.NONE);
        assertThat(coordinator.describe(TXN).orElseThrow().groupIds()).containsExactly("g");
        assertThat(state()).isEqualTo(TransactionState.ONGOING);
    }

    @Test
    void shouldCompleteATransactionFoundInPrepareCommitAfterARestart() {
        // Given a transaction caught in PREPARE_COMMIT (the markers never finished)
        ProducerIdAndEpoch p = ongoing(List.of(P0, P1));
        assertThat(coordinator.addOffsets(TXN, p.producerId(), p.producerEpoch(), "billing").join())
                .isEqualTo(Errors.NONE);
        coordinator.endTxn(TXN, p.producerId(), p.producerEpoch(), true, false).join();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.PREPARE_COMMIT);

        // When a new coordinator recovers from the durable state
        markers.calls.clear();
        coordinator = newCoordinator();
        coordinator.recover(store.transactions().values());

        // Then the markers are written again and the commit completes
        assertThat(markers.calls).containsExactly(
                new Marker(p.producerId(), p.producerEpoch(), 3, true, Set.of(P0, P1), Set.of("billing")));
        markers.completeLast();
        assertThat(store.state(TXN)).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }

    @Test
    void shouldKeepAnOngoingTransactionAcrossARestartAndTimeItOut() {
        ProducerIdAndEpoch p = ongoing(List.of(P0));
        coordinator = newCoordinator();
        coordinator.recover(store.transactions().values());
        assertThat(markers.calls).isEmpty();
        assertThat(coordinator.addPartitions(TXN, p.producerId(), p.producerEpoch(), List.of(P1)).join())
                .isEqualTo(Errors.NONE);

        clock.advance(60_000);
        coordinator.onDeadlines();
        assertThat(markers.calls).containsExactly(new Marker(p.producerId(), (short) 1, 3, false, Set.of(P0, P1),
                Set.of()));
    }

    @Test
    void shouldExpireAnIdleIdAfterTheExpirationButNotAnOngoingOne() {
        init();
        coordinator.initProducerId("busy", 900_000, -1, (short) -1).join();
        ProducerIdAndEpoch busy = coordinator.initProducerId("busy", 900_000, -1, (short) -1).join();

        // busy's transaction times out one ms after TXN expires
        clock.advance(TransactionConfig.DEFAULTS.idExpirationMs() - 900_000 + 1);
        coordinator.addPartitions("busy", busy.producerId(), busy.producerEpoch(), List.of(P0)).join();
        clock.advance(900_000 - 2);
        assertThat(coordinator.onDeadlines()).isZero();
        clock.advance(1);
        assertThat(coordinator.onDeadlines()).isEqualTo(1);

        assertThat(coordinator.describe(TXN)).isEmpty();
        assertThat(store.durable).doesNotContainKey(TXN).containsKey("busy");
        assertThat(init()).as("a new id again").isEqualTo(new ProducerIdAndEpoch(Errors.NONE, 1002, (short) 0));
    }

    @Test
    void shouldDescribeAndListWithFilters() {
        ProducerIdAndEpoch a = ongoing(List.of(P0));
        coordinator.initProducerId("b", 1000, -1, (short) -1).join();
        clock.advance(5_000);

        TransactionDescription d = coordinator.describe(TXN).orElseThrow();
        assertThat(d).isEqualTo(new TransactionDescription(TXN, TransactionState.ONGOING, a.producerId(),
                a.producerEpoch(), 60_000, 1_000_000, Set.of(P0), Set.of()));
        assertThat(coordinator.list(TransactionFilter.ALL)).extracting(TransactionListing::transactionalId)
                .containsExactlyInAnyOrder(TXN, "b");
        assertThat(coordinator.list(new TransactionFilter(Set.of(TransactionState.EMPTY), Set.of(), -1)))
                .extracting(TransactionListing::transactionalId).containsExactly("b");
        assertThat(coordinator.list(new TransactionFilter(Set.of(), Set.of(a.producerId()), -1)))
                .extracting(TransactionListing::transactionalId).containsExactly(TXN);
        assertThat(coordinator.list(new TransactionFilter(Set.of(), Set.of(), 4_999)))
                .extracting(TransactionListing::transactionalId).containsExactly(TXN);
        assertThat(coordinator.list(new TransactionFilter(Set.of(), Set.of(), 5_000))).isEmpty();
        assertThat(coordinator.describe("nope")).isEmpty();
    }

    @Test
    void shouldRefuseIllegalTransitions() {
        TransactionMetadata m = new TransactionMetadata(new TransactionRecord(TXN, 1, -1, -1, (short) 0, (short) -1,
                1000, TransactionState.EMPTY.id(), Set.of(), Set.of(), -1, 0, (short) 1));
        TransactionRecord commit = new TransactionRecord(TXN, 1, -1, -1, (short) 0, (short) -1, 1000,
                TransactionState.PREPARE_COMMIT.id(), Set.of(), Set.of(), -1, 0, (short) 1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> m.transitionTo(commit))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("EMPTY -> PREPARE_COMMIT");
    }
}
