package io.pier.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** Small helpers for the futures that handlers fan out per topic, partition or group. */
public final class Futures {
    private Futures() {}

    /** The failure a dependent stage reports, without the CompletionException it is wrapped in. */
    public static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
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

    /**
     * Runs {@code task} on {@code timer} after the delay. If it throws, {@code target} fails with
     * it, so the failure does not stay in a ScheduledFuture that nobody reads.
     */
    public static void schedule(ScheduledExecutorService timer, CompletableFuture<?> target, Runnable task,
            long delay, TimeUnit unit) {
        var unused = timer.schedule(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                target.completeExceptionally(e);
            }
        }, delay, unit);
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
