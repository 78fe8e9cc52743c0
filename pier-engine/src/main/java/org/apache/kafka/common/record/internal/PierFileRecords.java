package org.apache.kafka.common.record.internal;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * Pier's bridge to the package-private {@link FileRecords} constructor that takes an already open
 * channel, so a segment's file can be opened through {@code io.pier.log.FileIO} (a real
 * {@link FileChannel}, or a fault-injecting one in crash tests). Lives in Kafka's package only for
 * that constructor; it holds no logic.
 */
public final class PierFileRecords {
    private PierFileRecords() {}

    /** A mutable, unsliced view of the whole of {@code channel}, positioned at its end. */
    public static FileRecords open(File file, FileChannel channel) throws IOException {
        return new FileRecords(file, channel, Integer.MAX_VALUE);
    }
}
