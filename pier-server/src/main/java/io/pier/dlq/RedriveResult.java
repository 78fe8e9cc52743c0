package io.pier.dlq;

import java.util.List;

/**
 * What a redrive did, in numbers.
 *
 * @param dryRun whether nothing was written ({@code moved} then counts the letters that would move)
 * @param moved letters produced back (or that would be)
 * @param skippedOtherGroup letters of other groups than the one asked for
 * @param skippedAlreadyMoved letters an earlier run moved or reported failed
 * @param failed letters that could not be moved (see {@code failures})
 * @param failures each failed letter, with why
 * @param maxReached whether the run stopped at its maximum with letters left
 */
public record RedriveResult(boolean dryRun, long moved, long skippedOtherGroup, long skippedAlreadyMoved,
        long failed, List<RedriveOutcome> failures, boolean maxReached) {

    public RedriveResult {
        failures = List.copyOf(failures);
    }

    public long skipped() {
        return skippedOtherGroup + skippedAlreadyMoved;
    }

    /** The summary line the CLI prints. */
    public String summary(String dlqTopic) {
        return (dryRun ? "Dry run of " + dlqTopic + " (nothing written): would move " : "Redrive of " + dlqTopic + ": moved ")
                + moved + ", skipped " + skipped() + " (other groups " + skippedOtherGroup + ", already moved "
                + skippedAlreadyMoved + "), " + (dryRun ? "would fail " : "failed ") + failed
                + (maxReached ? " (stopped at --max; more letters left)" : "");
    }
}
