package io.pier.log;

/**
 * Named steps of a durable write at which crash tests stop the writer (see {@link FileIO#crashPoint}).
 *
 * <pre>
 *   append ... AFTER_APPEND_BEFORE_FSYNC ... fsync ... AFTER_FSYNC_BEFORE_RESPONSE ... reply
 *              (LogFlush.force: on the thread     (PartitionLog.completeFlush: on the
 *               that forces, a shard's flusher)    log's owner, before any callback runs)
 *   segment roll: new file created, MID_SEGMENT_ROLL; the old segment's tail and the directory
 *                 are forced by the next flush
 *   share-state snapshot: MID_SNAPSHOT between the snapshot records of one flush
 *   checkpoint (AtomicFiles.write): temp file written and fsynced, CHECKPOINT_BEFORE_RENAME,
 *                 rename over the old one, CHECKPOINT_BEFORE_DIRECTORY_FSYNC, directory fsync
 *   retention or DeleteRecords: segments deleted, AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, directory fsync
 *   mirror restart: start checkpoint written, every segment deleted and the new one created,
 *                 AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, directory fsync
 * </pre>
 */
public enum CrashPoint {
    AFTER_APPEND_BEFORE_FSYNC,
    AFTER_FSYNC_BEFORE_RESPONSE,
    MID_SNAPSHOT,
    MID_SEGMENT_ROLL,
    CHECKPOINT_BEFORE_RENAME,
    CHECKPOINT_BEFORE_DIRECTORY_FSYNC,
    AFTER_DELETE_BEFORE_DIRECTORY_FSYNC
}
