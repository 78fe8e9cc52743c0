package io.pier.log;

/** A record's offset with its timestamp, the answer to a ListOffsets lookup. */
public record OffsetAndTimestamp(long offset, long timestampMs) {}
