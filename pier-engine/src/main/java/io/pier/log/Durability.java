package io.pier.log;

/**
 * When appended data counts as committed.
 *
 * <ul>
 *   <li>{@link #DURABLE}: the high watermark is the durable end of the log; it advances only when
 *       {@link PartitionLog#flush()} has forced the data to disk, so an acknowledged produce
 *       survives power loss.
 *   <li>{@link #NONE}: data sits in the page cache; the high watermark is the log end offset, as
 *       on a single-node Kafka broker. A machine crash may lose acknowledged data.
 * </ul>
 */
public enum Durability {
    DURABLE,
    NONE
}
