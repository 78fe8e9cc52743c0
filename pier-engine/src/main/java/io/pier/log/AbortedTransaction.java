package io.pier.log;

/**
 * One aborted transaction of a partition: its producer's records from {@code firstOffset} up to
 * the ABORT marker at {@code lastOffset} are to be dropped by read_committed consumers. A Fetch
 * answer carries {@code (producerId, firstOffset)} of each one overlapping the records it returns.
 */
public record AbortedTransaction(long producerId, long firstOffset, long lastOffset) {}
