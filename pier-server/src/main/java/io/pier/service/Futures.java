package io.pier.service;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Small helpers for the futures that handlers fan out per topic, partition or group. */
public final class Futures {
    private Futures() {}

    /** The failure a dependent stage reports, without the CompletionException it is wrapped in. */
    public static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /** Completes with every result, in the order of {@code futures}, once all have completed. */
    public static <T> CompletableFuture<List<T>> all(List<CompletableFuture<T>> futures) {
        return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
            List<T> out = new ArrayList<>();
            futures.forEach(f -> out.add(f.join()));
            return out;
        });
    }
}
