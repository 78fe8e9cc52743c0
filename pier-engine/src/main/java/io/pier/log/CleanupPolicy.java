package io.pier.log;

import java.util.Locale;

/**
 * A topic's {@code cleanup.policy}: {@code delete} (retention.ms and retention.bytes remove old
 * segments), {@code compact}, or both. Pier accepts {@code compact} but does not compact yet: a
 * compacted topic keeps every record and retention leaves it alone (unless {@code delete} is in
 * the policy too). Readers of a compacted topic must handle several records per key anyway,
 * since Kafka only compacts segments that are no longer active, so what they read stays correct;
 * only the disk use is not bounded. Produce to a compacted topic needs a key on every record, as
 * in Kafka.
 *
 * @param delete whether retention deletes old segments
 * @param compact whether the topic is compacted (every record needs a key)
 */
public record CleanupPolicy(boolean delete, boolean compact) {
    public static final CleanupPolicy DELETE = new CleanupPolicy(true, false);

    /**
     * Parses Kafka's comma-separated list ({@code delete}, {@code compact}, {@code compact,delete}
     * in any order and case, blanks around the items allowed).
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static CleanupPolicy parse(String value) {
        boolean delete = false;
        boolean compact = false;
        for (String item : value.split(",", -1)) {
            switch (item.trim().toLowerCase(Locale.ROOT)) {
                case "delete" -> delete = true;
                case "compact" -> compact = true;
                default -> throw new IllegalArgumentException("expected a list of delete and compact");
            }
        }
        return new CleanupPolicy(delete, compact);
    }

    /** As Kafka prints it. */
    @Override
    public String toString() {
        return compact && delete ? "compact,delete" : compact ? "compact" : "delete";
    }
}
