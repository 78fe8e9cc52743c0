package io.pier.txn;

import java.util.EnumSet;
import java.util.Set;

/**
 * The states of a transactional id, with Kafka's ids and allowed previous states
 * ({@code org.apache.kafka.coordinator.transaction.TransactionState}, 4.4).
 *
 * <pre>
 *            AddPartitions/AddOffsets                 EndTxn(commit)
 *   EMPTY ---------------------------&gt; ONGOING ----------------------&gt; PREPARE_COMMIT
 *     ^  ^                              |  |  \  InitProducerId or        | markers written
 *     |  |                              |  |   \ timeout: PREPARE_EPOCH   v
 *     |  |          EndTxn(abort)       |  |    \ _FENCE (memory only)  COMPLETE_COMMIT --+
 *     |  |   +--------------------------+  |     v                                        |
 *     |  |   v                             +-&gt; PREPARE_ABORT --markers--&gt; COMPLETE_ABORT --+
 *     |  +---------- InitProducerId (epoch bump) from COMPLETE_* ------------------------+
 *     +-- (TV2: an abort of EMPTY / COMPLETE_* goes to PREPARE_ABORT too)
 *   EMPTY / COMPLETE_* idle past transactional.id.expiration.ms --&gt; DEAD (forgotten)
 * </pre>
 */
public enum TransactionState {
    EMPTY(0),
    ONGOING(1),
    PREPARE_COMMIT(2),
    PREPARE_ABORT(3),
    COMPLETE_COMMIT(4),
    COMPLETE_ABORT(5),
    DEAD(6),
    PREPARE_EPOCH_FENCE(7);

    private final byte id;

    TransactionState(int id) {
        this.id = (byte) id;
    }

    /** Kafka's state id, also what the transaction-state log stores. */
    public byte id() {
        return id;
    }

    public static TransactionState fromId(byte id) {
        for (TransactionState s : values()) {
            if (s.id == id) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown transaction state id " + id);
    }

    /** The states this one may be entered from. */
    public Set<TransactionState> validPreviousStates() {
        return switch (this) {
            case EMPTY -> EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case ONGOING -> EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case PREPARE_COMMIT -> EnumSet.of(ONGOING);
            case PREPARE_ABORT -> EnumSet.of(ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case COMPLETE_COMMIT -> EnumSet.of(PREPARE_COMMIT);
            case COMPLETE_ABORT -> EnumSet.of(PREPARE_ABORT);
            case DEAD -> EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
            case PREPARE_EPOCH_FENCE -> EnumSet.of(ONGOING);
        };
    }

    /** True for the states a transaction rests in between transactions (Kafka's expirable ones). */
    public boolean isIdle() {
        return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
    }

    /** Kafka's name of the state, as Admin's {@code TransactionState.parse} reads it (DescribeTransactions). */
    public String kafkaName() {
        return switch (this) {
            case EMPTY -> "Empty";
            case ONGOING -> "Ongoing";
            case PREPARE_COMMIT -> "PrepareCommit";
            case PREPARE_ABORT -> "PrepareAbort";
            case COMPLETE_COMMIT -> "CompleteCommit";
            case COMPLETE_ABORT -> "CompleteAbort";
            case DEAD -> "Dead";
            case PREPARE_EPOCH_FENCE -> "PrepareEpochFence";
        };
    }
}
