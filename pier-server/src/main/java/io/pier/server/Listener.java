package io.pier.server;

import io.pier.network.NetworkServer;
import io.pier.protocol.ApiRouter;

/**
 * The Kafka listener before it binds: its router, still taking routes, and its event loops with
 * an unbound server socket. It needs nothing from the data folder, so {@link #startBuilding}
 * builds it on a thread of its own while the broker opens its logs; the broker binds it once they
 * serve. This class has no logger on purpose: the thread starts before the broker's logging is
 * set up, which reads the whole class path.
 */
record Listener(ApiRouter router, NetworkServer server) implements AutoCloseable {
    static ParallelStep<Listener> startBuilding(BrokerConfig config) {
        return ParallelStep.start("pier-start-listener", () -> {
            // Creating the router initialises kafka-clients' ApiKeys, and with it every message schema.
            ApiRouter router = new ApiRouter();
            return new Listener(router, new NetworkServer(config.socketRequestMaxBytes(),
                    config.connectionsMaxIdleMs(), router, Math.max(1, Runtime.getRuntime().availableProcessors())));
        });
    }

    @Override
    public void close() {
        server.close();
    }
}
