package io.pier.share;

/**
 * Delivery state of one record of a share-partition (KIP-932), with Kafka's wire ids.
 *
 * <pre>
 *                  acquire (count + 1)
 *   AVAILABLE  ------------------------------&gt;  ACQUIRED
 *       |      &lt;------------------------------   |    |
 *       |       RELEASE, lock expiry, member     |    | ACCEPT
 *       |       release, while count &lt; limit    |    v
 *       |                                        |  ACKNOWLEDGED   (terminal)
 *       | archive: log start moved past it,      |
 *       | missing from the log, or its count     | REJECT, GAP, or RELEASE / lock
 *       | already reached a lowered limit        | expiry / member release at
 *       v                                        v count &gt;= limit
 *   ARCHIVED  &lt;----------------------------------+                 (terminal)
 *       ^
 *       | its dead letter is durable (or cannot be written)
 *   ARCHIVING  &lt;--- instead of ARCHIVED, when the group has a dead-letter queue (KIP-1191)
 *                    and the record was REJECTed or used its last delivery
 *
 *   New offsets enter ACQUIRED, or AVAILABLE with count 0 when cached but not yet delivered.
 * </pre>
 *
 * <p>ACQUIRED is never persisted. ARCHIVING is: a record waiting for its dead letter is neither
 * acquirable nor settled, so the start offset stops at it, and a restart finds it still waiting.
 */
public enum RecordState {
    AVAILABLE((byte) 0),
    ACQUIRED((byte) 1),
    ACKNOWLEDGED((byte) 2),
    ARCHIVING((byte) 3),
    ARCHIVED((byte) 4);

    private static final RecordState[] VALUES = values();

    public final byte id;

    RecordState(byte id) {
        this.id = id;
    }

    public boolean isTerminal() {
        return this == ACKNOWLEDGED || this == ARCHIVED;
    }

    /** Whether {@code this -> next} is one of the legal moves drawn above. */
    public boolean canTransitionTo(RecordState next) {
        switch (this) {
            case AVAILABLE:
                return next == ACQUIRED || next == ARCHIVED || next == ARCHIVING;
            case ACQUIRED:
                return next == AVAILABLE || next == ACKNOWLEDGED || next == ARCHIVED || next == ARCHIVING;
            case ARCHIVING:
                return next == ARCHIVED;
            default:
                return false;
        }
    }

    public static RecordState forId(byte id) {
        for (RecordState s : VALUES) {
            if (s.id == id) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown record state id " + id);
    }
}
