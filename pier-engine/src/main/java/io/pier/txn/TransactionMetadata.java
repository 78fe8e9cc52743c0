package io.pier.txn;

import io.pier.state.TransactionRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * One transactional id on its coordinator's shard: its current state (durable, except a
 * PREPARE_EPOCH_FENCE which lives only in memory until the abort it starts is written) and the
 * change being written, if any. Owned by the shard thread.
 *
 * <p><b>Invariant.</b> Every change of state goes through {@link #transitionTo}, which checks the
 * allowed previous states as Kafka's {@code TransactionMetadata.transitionTo} does. While a
 * change is pending (its record on its way to disk, or a new producer id being allocated), the id
 * answers CONCURRENT_TRANSACTIONS, as in Kafka, and the client retries.
 */
final class TransactionMetadata {
    private TransactionRecord current;
    private TransactionState state;
    private TransactionState pending;
    /** Markers of the PREPARE_* state are being written (at most one write at a time). */
    boolean markersInFlight;
    /**
     * When markers that failed are tried again, in monotonic ms ({@link Long#MIN_VALUE}: at once).
     * A pure delay, so a step of the wall clock neither hurries nor postpones it.
     */
    long markerRetryAtMonoMs = Long.MIN_VALUE;
    /** Failed marker writes in a row of the current PREPARE_* state: what the warnings count. */
    int markerFailures;
    /** Found in PREPARE_* by a restart and not completed yet: its completion is logged. */
    boolean completingAfterRestart;
    /**
     * Adds of this id's producer that came while a change was under way (a pending write, or
     * markers of PREPARE_*), in arrival order: done after it, together.
     */
    private List<ParkedAdd> parked = List.of();

    /**
     * One parked AddPartitionsToTxn / AddOffsetsToTxn, or the add a Produce or TxnOffsetCommit
     * makes under transaction version 2.
     */
    record ParkedAdd(long producerId, short producerEpoch, Set<TopicPartition> partitions, Set<String> groupIds,
            short version, CompletableFuture<Errors> reply) {}

    TransactionMetadata(TransactionRecord current) {
        this.current = current;
        this.state = TransactionState.fromId(current.state());
    }

    TransactionRecord current() {
        return current;
    }

    TransactionState state() {
        return state;
    }

    boolean hasPending() {
        return pending != null;
    }

    /** Marks {@code next} as on its way (checked now, so an illegal change never reaches the disk). */
    void prepare(TransactionState next) {
        if (pending != null) {
            throw new IllegalStateException(current.transactionalId() + " already has a pending " + pending);
        }
        check(next);
        pending = next;
    }

    /** The pending change did not happen (its write failed). */
    void abandonPending() {
        pending = null;
    }

    /** Parks {@code add} until the change under way is written (or fails). */
    void park(ParkedAdd add) {
        if (parked.isEmpty()) {
            parked = new ArrayList<>(2);
        }
        parked.add(add);
    }

    /** The parked adds, removed from here. */
    List<ParkedAdd> takeParked() {
        List<ParkedAdd> taken = parked;
        parked = List.of();
        return taken;
    }

    /** The one place the state changes: to {@code next}, if allowed from the current state. */
    void transitionTo(TransactionRecord next) {
        TransactionState to = TransactionState.fromId(next.state());
        check(to);
        if (!next.transactionalId().equals(current.transactionalId())) {
            throw new IllegalStateException("transition of " + current.transactionalId() + " to another id");
        }
        current = next;
        state = to;
        pending = null;
    }

    private void check(TransactionState to) {
        if (!to.validPreviousStates().contains(state)) {
            throw new IllegalStateException(current.transactionalId() + ": illegal transition " + state + " -> " + to);
        }
    }
}
