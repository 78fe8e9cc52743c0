package io.pier.dlq;

import org.apache.kafka.common.TopicPartition;

/**
 * What a redrive did with one dead letter.
 *
 * @param status what happened to it
 * @param letter the dead-letter topic-partition holding the letter
 * @param letterOffset the letter's offset there
 * @param group the share group the record died in ({@code __dlq.errors.group}); null if the letter names none
 * @param source the topic-partition the record came from; null if the letter does not name one
 * @param sourceOffset its offset there ({@code __dlq.errors.offset}); -1 if the letter does not name one
 * @param fromCopy whether the record was rebuilt from the copy the letter carries (else read from {@code source})
 * @param targetTopic where it is (or would be) produced; null when it is not
 * @param targetPartition the partition it went to; -1 before it is moved when the partitioner chooses it
 * @param targetOffset its new offset once {@link Status#MOVED}; -1 otherwise
 * @param error why it could not be moved, for {@link Status#FAILED}; null otherwise
 */
public record RedriveOutcome(Status status, TopicPartition letter, long letterOffset, String group,
        TopicPartition source, long sourceOffset, boolean fromCopy, String targetTopic, int targetPartition,
        long targetOffset, String error) {

    /** What happened to a letter. */
    public enum Status {
        /** Produced back, and the progress past it committed in the same transaction. */
        MOVED,
        /** A dry run: it would be moved. */
        WOULD_MOVE,
        /** The letter of another group than the one asked for: left alone. */
        SKIPPED_OTHER_GROUP,
        /** Moved (or failed) by an earlier run: left alone. */
        SKIPPED_ALREADY_MOVED,
        /**
         * The record could not be rebuilt (no copy, and the source no longer holds it) or the
         * letter is not a dead letter; not moved, and not tried again by later runs.
         */
        FAILED
    }

    /** One line for people: the letter, its group, where it came from and where it goes, or why not. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append(letter).append('@').append(letterOffset);
        s.append(" group ").append(group == null ? "-" : group);
        if (source != null) {
            s.append(" from ").append(source).append('@').append(sourceOffset);
            if (status == Status.MOVED || status == Status.WOULD_MOVE) {
                s.append(fromCopy ? " (copy)" : " (read from the source)");
            }
        }
        if (targetTopic != null && (status == Status.MOVED || status == Status.WOULD_MOVE)) {
            s.append(" -> ").append(targetTopic).append('-')
                    .append(targetPartition < 0 ? "(partitioner)" : String.valueOf(targetPartition));
            if (targetOffset >= 0) {
                s.append('@').append(targetOffset);
            }
        }
        if (error != null) {
            s.append(": ").append(error);
        }
        return s.toString();
    }
}
