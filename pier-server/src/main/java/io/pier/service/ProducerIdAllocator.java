package io.pier.service;

import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * Hands out producer ids that are never reused, even across crashes: a block of ids is reserved
 * on disk before any id from it is given out, so a restart continues after the last block. Owned
 * by one shard; the rare block reservation (one fsync per 1,000 ids) runs there.
 */
public final class ProducerIdAllocator {
    private static final long BLOCK_SIZE = 1000;
    private final Path file;
    private final FileIO io;
    private final Shard owner;
    private long next;
    private long blockEnd;

    ProducerIdAllocator(Path dataDir, Shard owner, FileIO io) throws IOException {
        this.owner = owner;
        this.io = io;
        this.file = dataDir.resolve("meta").resolve("producer-id-block");
        long start = 0;
        if (Files.exists(file)) {
            start = Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
        }
        this.next = start;
        this.blockEnd = start;
    }

    /** A producer id never given out before. */
    public CompletableFuture<Long> nextProducerId() {
        return owner.call(this::nextOnShard);
    }

    private long nextOnShard() {
        if (next >= blockEnd) {
            try {
                AtomicFiles.write(io, file, String.valueOf(blockEnd + BLOCK_SIZE).getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot reserve producer ids in " + file, e);
            }
            blockEnd += BLOCK_SIZE;
        }
        return next++;
    }
}
