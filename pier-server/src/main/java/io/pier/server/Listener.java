package io.pier.server;

import io.pier.log.FileIO;
import io.pier.network.ConnectionLimits;
import io.pier.network.NetworkServer;
import io.pier.network.RequestBytesBudget;
import io.pier.protocol.ApiRouter;
import io.pier.security.ScramCredentialStore;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * The Kafka listeners before they bind: the router, still taking routes, and the event loops with
 * an unbound server socket per listener (TLS contexts built, key stores read). It needs nothing from the data folder, so {@link #startBuilding}
 * builds it on a thread of its own while the broker opens its logs; the broker binds it once they
 * serve. This class has no logger on purpose: the thread starts before the broker's logging is
 * set up, which reads the whole class path.
 */
record Listener(ApiRouter router, NetworkServer server, ScramCredentialStore scram) implements AutoCloseable {
    /** The SCRAM credentials' file inside the data folder. */
    static final String SCRAM_CREDENTIALS_FILE = "meta/scram-credentials";

    static ParallelStep<Listener> startBuilding(BrokerConfig config, FileIO io) {
        return ParallelStep.start("pier-start-listener", () -> {
            // Creating the router initialises kafka-clients' ApiKeys, and with it every message schema.
            ApiRouter router = new ApiRouter();
            // A few hundred bytes, read (never written) here; the broker adds bootstrap users once it holds the folder.
            // A gateway's are on the upstream, every node's (UpstreamScramCredentials).
            ScramCredentialStore scram = config.gateway() ? ScramCredentialStore.remote() : ScramCredentialStore.open(
                    config.dataDir().toAbsolutePath().resolve(SCRAM_CREDENTIALS_FILE), io);
            // Checked here so a bad value stops the start before the logs open; applied by the broker.
            var unused = ScramBootstrap.parse(config.raw().get(ScramBootstrap.SETTING));
            List<NetworkServer.Endpoint> endpoints = new ArrayList<>();
            for (ListenerSpec spec : config.listeners()) {
                SecurityProtocol protocol = spec.protocol();
                boolean tls = protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
                boolean sasl = protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL;
                // Key and trust stores are read here, so a bad one stops the start naming its setting.
                endpoints.add(new NetworkServer.Endpoint(spec.name(),
                        tls ? TlsSettings.serverContext(config.raw(), spec.name()) : null,
                        protocol == SecurityProtocol.SSL ? TlsSettings.principalMapper(config.raw(), spec.name()) : null,
                        sasl ? SaslSettings.forListener(config.raw(), spec.name(), scram) : null));
            }
            // Resolves the host names of max.connections.per.ip.overrides: an unknown one stops the start.
            ConnectionLimits limits = config.connectionLimits().limits();
            return new Listener(router, new NetworkServer(config.socketRequestMaxBytes(),
                    config.connectionsMaxIdleMs(), router, Math.max(1, Runtime.getRuntime().availableProcessors()),
                    endpoints, limits, new RequestBytesBudget(config.queuedMaxRequestBytes())), scram);
        });
    }

    @Override
    public void close() {
        server.close();
    }
}
