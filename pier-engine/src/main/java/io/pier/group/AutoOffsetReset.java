package io.pier.group;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Objects;

/**
 * Where a share group starts reading a partition it has no state for (group config {@code
 * share.auto.offset.reset}): {@code latest}, {@code earliest}, or {@code by_duration:<ISO-8601
 * duration>} (the first record whose timestamp is at least now minus the duration).
 *
 * <p>Immutable. Invariant: {@code duration} is non-null and non-negative exactly when {@code
 * strategy} is {@link Strategy#BY_DURATION}, and null otherwise.
 */
public record AutoOffsetReset(Strategy strategy, Duration duration) {

    /** The three reset strategies Kafka defines for share groups. */
    public enum Strategy {
        LATEST,
        EARLIEST,
        BY_DURATION
    }

    public static final AutoOffsetReset LATEST = new AutoOffsetReset(Strategy.LATEST, null);
    public static final AutoOffsetReset EARLIEST = new AutoOffsetReset(Strategy.EARLIEST, null);

    private static final String BY_DURATION_PREFIX = "by_duration:";

    public AutoOffsetReset {
        Objects.requireNonNull(strategy, "strategy");
        if (strategy == Strategy.BY_DURATION) {
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative()) {
                throw new IllegalArgumentException("duration must not be negative: " + duration);
            }
        } else if (duration != null) {
            throw new IllegalArgumentException(strategy + " takes no duration");
        }
    }

    public static AutoOffsetReset byDuration(Duration duration) {
        return new AutoOffsetReset(Strategy.BY_DURATION, duration);
    }

    /**
     * Parses a config value; the keyword is case-insensitive.
     *
     * @throws IllegalArgumentException with a message saying what is wrong with {@code value}
     */
    public static AutoOffsetReset parse(String value) {
        String trimmed = value.trim();
        String lower = trimmed.toLowerCase(Locale.ROOT);
        if (lower.equals("latest")) {
            return LATEST;
        }
        if (lower.equals("earliest")) {
            return EARLIEST;
        }
        if (lower.startsWith(BY_DURATION_PREFIX)) {
            String iso = trimmed.substring(BY_DURATION_PREFIX.length()).trim();
            Duration duration;
            try {
                duration = Duration.parse(iso);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException(
                        "'" + iso + "' is not an ISO-8601 duration (for example PT1H or P1D)", e);
            }
            if (duration.isNegative()) {
                throw new IllegalArgumentException("the duration must not be negative, got " + iso);
            }
            return byDuration(duration);
        }
        throw new IllegalArgumentException(
                "'" + value + "' is not one of latest, earliest or by_duration:<ISO-8601 duration>");
    }

    /** The config-value spelling, which {@link #parse} reads back. */
    @Override
    public String toString() {
        return switch (strategy) {
            case LATEST -> "latest";
            case EARLIEST -> "earliest";
            case BY_DURATION -> BY_DURATION_PREFIX + duration;
        };
    }
}
