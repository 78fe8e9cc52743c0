package io.pier.metrics;

import com.sun.net.httpserver.HttpHandler;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.BindException;

/**
 * The HTTP server answering {@code GET /metrics} in the Prometheus text format and, when given
 * one, every other path (but {@code /-/healthy}) with a handler of pages: the web console.
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HTTPServer server;

    private MetricsEndpoint(HTTPServer server) {
        this.server = server;
    }

    /** @param pages what answers the paths other than {@code /metrics}; null for the exporter's own page */
    static MetricsEndpoint start(PrometheusRegistry registry, String host, int port, HttpHandler pages)
            throws IOException {
        try {
            HTTPServer.Builder builder = HTTPServer.builder().hostname(host).port(port).registry(registry);
            if (pages != null) {
                builder.defaultHandler(pages);
            }
            return new MetricsEndpoint(builder.buildAndStart());
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
