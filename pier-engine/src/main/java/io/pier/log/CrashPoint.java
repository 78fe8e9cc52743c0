package io.pier.log;

/**
 * Named steps of a durable write at which crash tests stop the writer (see {@link FileIO#crashPoint}).
 *
 * <pre>
 *   append ... AFTER_APPEND_BEFORE_FSYNC ... fsync ... AFTER_FSYNC_BEFORE_RESPONSE ... reply
 *   segment roll: old segment forced, new file created, MID_SEGMENT_ROLL, directory fsync
 *   share-state snapshot: MID_SNAPSHOT between the snapshot records of one flush
 * </pre>
 */
public enum CrashPoint {
    AFTER_APPEND_BEFORE_FSYNC,
    AFTER_FSYNC_BEFORE_RESPONSE,
    MID_SNAPSHOT,
    MID_SEGMENT_ROLL
}
