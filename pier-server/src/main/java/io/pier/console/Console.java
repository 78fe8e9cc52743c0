package io.pier.console;

import com.sun.net.httpserver.HttpHandler;
import io.pier.metrics.PierMetrics;
import io.pier.security.acl.Authorizer;

/**
 * The read-only web console, served on the metrics port next to {@code /metrics}: the broker's
 * topics and request rates, its share groups (members, share-partitions, records by state, lag,
 * oldest age, dead letters, delivery counts) and consumer groups (members, committed offsets,
 * lag), with plots of lag and oldest age over the last samples. See docs/operations.md.
 *
 * <p>Threads: pages render on the HTTP server's threads from the snapshots the shards publish for
 * the metrics; the plots' {@link Sampler} runs on a thread of its own. Neither reads engine state;
 * group members come from the group's shard through its command queue.
 */
public final class Console implements AutoCloseable {
    private final Sampler sampler;
    private final ConsoleHandler handler;

    private Console(Sampler sampler, ConsoleHandler handler) {
        this.sampler = sampler;
        this.handler = handler;
    }

    /**
     * Starts the sampler; serve {@link #handler()} to show the pages.
     *
     * @param authorizer the broker's authorizer, or null when authorization is off
     */
    public static Console start(PierMetrics metrics, ConsoleSettings settings, ConsoleSources sources,
            Authorizer authorizer) {
        History history = new History();
        Sampler sampler = new Sampler(metrics, history, settings.sampleIntervalMs(), System::currentTimeMillis);
        ConsoleHandler handler = new ConsoleHandler(metrics, settings, sources, authorizer, history, sampler,
                System::currentTimeMillis);
        sampler.start();
        return new Console(sampler, handler);
    }

    /** Answers every console path; mount it at {@code /}. */
    public HttpHandler handler() {
        return handler;
    }

    @Override
    public void close() {
        sampler.close();
    }
}
