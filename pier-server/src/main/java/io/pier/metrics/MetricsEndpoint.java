package io.pier.metrics;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.BindException;

/** The HTTP server answering {@code GET /metrics} in the Prometheus text format. */
public final class MetricsEndpoint implements AutoCloseable {
    private final HTTPServer server;

    private MetricsEndpoint(HTTPServer server) {
        this.server = server;
    }

    static MetricsEndpoint start(PrometheusRegistry registry, String host, int port) throws IOException {
        try {
            return new MetricsEndpoint(HTTPServer.builder().hostname(host).port(port).registry(registry)
                    .buildAndStart());
        } catch (BindException e) {
            throw new IOException("cannot serve metrics on " + host + ":" + port + " (pier.metrics.port): "
                    + e.getMessage(), e);
        }
    }

    /** The bound port (the chosen one when 0 was asked for). */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }
}
