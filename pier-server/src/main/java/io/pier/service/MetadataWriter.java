package io.pier.service;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * Where durable cluster metadata beside the topics is written (ACLs, SCRAM credentials): one
 * thread, the metadata agent, runs the writes one at a time, so the event loops never wait on a
 * file's fsync and the stores need no lock (each is written by that one thread only).
 */
@FunctionalInterface
public interface MetadataWriter {
    /** Runs {@code write} on the metadata agent; the future carries its result or failure. */
    <T> CompletableFuture<T> write(Callable<T> write);

    /** Runs the write in the calling thread: for tests and start-up, before the agent runs. */
    MetadataWriter DIRECT = new MetadataWriter() {
        @Override
        public <T> CompletableFuture<T> write(Callable<T> write) {
            try {
                return CompletableFuture.completedFuture(write.call());
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }
    };
}
