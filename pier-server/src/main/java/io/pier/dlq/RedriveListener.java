package io.pier.dlq;

/**
 * Hears how a redrive goes. Called on the thread that runs it; a listener that throws stops the
 * run like a crash would (what was committed stays moved, nothing is moved twice).
 */
public interface RedriveListener {
    /** Before the first letter: how many letters there are to look at (an upper bound with a group filter). */
    default void started(long lettersToScan) {}

    /**
     * After each letter's outcome is final: {@link RedriveOutcome.Status#MOVED} only once its
     * transaction is committed, in the order of the dead-letter topic-partition.
     */
    default void outcome(RedriveOutcome outcome) {}

    /** After each transaction (each batch of letters in a dry run): letters looked at so far. */
    default void progress(long scanned, long lettersToScan) {}
}
