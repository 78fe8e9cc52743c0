package io.pier.share;

import io.pier.state.ShareStateWrite;
import java.util.List;

/**
 * ARCHIVING records of one share-partition taken for their dead letters (KIP-1191), with the
 * change that archives them. The owner persists {@link #dying()}, writes one dead letter per
 * record, then persists {@link #change()}'s write and commits it; the records stay ARCHIVING, and are not taken again, until
 * it commits or rolls back.
 */
public final class DeadLetterBatch {
    /** Why a record died, which its dead letter's {@code __dlq.errors.message} says. */
    public enum Reason {
        REJECTED("Offset rejected by client."),
        DELIVERY_LIMIT("Offset delivery count exceeded the threshold.");

        public final String message;

        Reason(String message) {
            this.message = message;
        }
    }

    /**
     * One dead record: its offset, how often it was delivered, and why it died.
     *
     * @param recovered the record was ARCHIVING when its state was loaded: a crash may have come
     *     after its dead letter was written and before ARCHIVED was, so look for it first
     */
    public record Letter(long offset, short deliveryCount, Reason reason, boolean recovered) {}

    private final List<Letter> letters;
    private final PendingChange change;
    private final ShareStateWrite dying;

    DeadLetterBatch(List<Letter> letters, PendingChange change, ShareStateWrite dying) {
        this.letters = List.copyOf(letters);
        this.change = change;
        this.dying = dying;
    }

    /**
     * The records as ARCHIVING, to persist before their letters are written: a record can die
     * without a write of its own (its lock expired, whose write may still be on its way, or a fetch
     * found it over a lowered limit), and a letter must never be in the queue while a restart would
     * bring its record back alive and let it die, and be lettered, a second time.
     */
    public ShareStateWrite dying() {
        return dying;
    }

    /** The dead records, by ascending offset. */
    public List<Letter> letters() {
        return letters;
    }

    /** Moves the records from ARCHIVING to ARCHIVED once persisted. */
    public PendingChange change() {
        return change;
    }
}
