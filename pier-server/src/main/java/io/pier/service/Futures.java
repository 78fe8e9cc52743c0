package io.pier.service;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/** Small helpers for the futures that handlers fan out per topic, partition or group. */
public final class Futures {
    private Futures() {}

    /** The failure a dependent stage reports, without the CompletionException it is wrapped in. */
    public static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /**
     * The I/O error behind {@code failure}: a store's log failed, which the caller answers with a
     * Kafka code the client retries on. Any other failure is a broken invariant and is rethrown,
     * so it fails the request instead of passing for a storage fault.
     */
    public static IOException storageFailure(Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof IOException io) {
            return io;
        }
        throw new CompletionException(cause);
    }

    /**
     * For {@code stage.exceptionally(...)} after a callback that completes {@code target}: if the
     * stage failed, or the callback itself threw, {@code target} fails too instead of never completing.
     */
    public static <T> Function<Throwable, T> failing(CompletableFuture<?> target) {
        return t -> {
            target.completeExceptionally(unwrap(t));
            return null;
        };
    }

    /** Completes {@code target} as {@code source} completes, with its value or its failure. */
    public static <T> void forward(CompletableFuture<T> source, CompletableFuture<T> target) {
        source.whenComplete((v, t) -> {
            if (t != null) {
                target.completeExceptionally(unwrap(t));
            } else {
                target.complete(v);
            }
        }).exceptionally(t -> null);
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
