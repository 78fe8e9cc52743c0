package io.pier.server;

import io.pier.common.Clock;
import io.pier.log.FileIO;
import io.pier.service.NodeInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The embeddable Pier broker. {@code Pier.builder().start()} runs a broker in this JVM on
 * 127.0.0.1 with an ephemeral port and a temporary data folder, and gives back its bootstrap
 * address for the stock Kafka clients:
 *
 * <pre>{@code
 * try (Pier pier = Pier.builder().config("num.partitions", "3").start()) {
 *     props.put("bootstrap.servers", pier.bootstrapServers());
 * }
 * }</pre>
 */
public final class Pier implements AutoCloseable {
    private final Broker broker;
    private final Path tempDir;
    private final Path dataDir;

    private Pier(Broker broker, Path tempDir, Path dataDir) {
        this.broker = broker;
        this.tempDir = tempDir;
        this.dataDir = dataDir;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** host:port for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return broker.node().host() + ":" + broker.node().port();
    }

    /** host:port of the named listener ({@code SSL}, {@code PLAINTEXT}...), as Metadata advertises it. */
    public String bootstrapServers(String listenerName) {
        NodeInfo.Address a = broker.node().listeners().get(listenerName.toUpperCase(Locale.ROOT));
        if (a == null) {
            throw new IllegalArgumentException("no listener " + listenerName + " (" + broker.node().listeners().keySet() + ")");
        }
        return a.host() + ":" + a.port();
    }

    /**
     * Every listener as {@code NAME://host:port}, sorted by name, as Metadata advertises them: what
     * the start-up line shows, so a client of a second listener knows where to go.
     */
    public String listeners() {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(broker.node().listeners()).forEach((name, a) ->
                out.append(out.length() == 0 ? "" : ",").append(name).append("://").append(a.host()).append(':')
                        .append(a.port()));
        return out.toString();
    }

    public int port() {
        return broker.node().port();
    }

    public Path dataDir() {
        return dataDir;
    }

    /** Port of the metrics endpoint ({@code http://<pier.metrics.host>:<port>/metrics}); -1 if off. */
    public int metricsPort() {
        return broker.metricsPort();
    }

    @Override
    public void close() {
        broker.close();
        if (tempDir != null) {
            deleteQuietly(tempDir);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind is harmless
        }
    }

    /** Settings use Kafka's names ({@code server.properties}); the builder's shortcuts set the same keys. */
    public static final class Builder {
        private final Map<String, String> props = new LinkedHashMap<>();
        private Path dataDir;
        /** Overrides the listener's port when set; null keeps {@code listeners} as configured. */
        private Integer port;
        private Clock clock = Clock.SYSTEM;
        private Runnable onFatal = () -> { };
        private FileIO io = FileIO.REAL;

        private Builder() {
            props.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
            // Like the listener: an embedded broker never competes for the fixed default port.
            props.put(BrokerConfig.METRICS_PORT, "0");
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Keep data here across restarts; without it a temporary folder is used and removed on close. */
        public Builder dataDir(Path dataDir) {
            this.dataDir = dataDir;
            return this;
        }

        public Builder config(String key, String value) {
            props.put(key, value);
            return this;
        }

        public Builder configs(Map<String, String> values) {
            props.putAll(values);
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * How the broker opens the segment files of its partition logs and state logs: real files
         * unless a test gives a fault-injecting layer (a full disk, failing writes).
         */
        public Builder fileIO(FileIO io) {
            this.io = io;
            return this;
        }

        /** Runs after the broker shut itself down because of a storage failure (the CLI exits). */
        public Builder onFatal(Runnable onFatal) {
            this.onFatal = onFatal;
            return this;
        }

        /** {@code listeners} with the first entry's port replaced, the others kept. */
        private static String withFirstPort(String listeners, int newPort) {
            String[] entries = listeners.split(",", 2);
            String first = entries[0].trim();
            int colon = first.lastIndexOf(':');
            String replaced = (colon < 0 ? first + ":" : first.substring(0, colon + 1)) + newPort;
            return entries.length == 1 ? replaced : replaced + "," + entries[1];
        }

        public Pier start() throws Exception {
            Path temp = null;
            Path dir = dataDir;
            if (dir == null) {
                temp = Files.createTempDirectory("pier-");
                dir = temp;
            }
            Map<String, String> all = new LinkedHashMap<>(props);
            all.put(BrokerConfig.LOG_DIRS, dir.toString());
            if (port != null) {
                all.put(BrokerConfig.LISTENERS, withFirstPort(all.get(BrokerConfig.LISTENERS), port));
            }
            try {
                BrokerConfig config = new BrokerConfig(all);
                // Started before the Broker class initialises, and with it the logging, so the two overlap.
                ParallelStep<Listener> listener = Listener.startBuilding(config, io);
                return new Pier(new Broker(config, clock, io, onFatal, listener), temp, dir);
            } catch (Exception e) {
                if (temp != null) {
                    deleteQuietly(temp);
                }
                throw e;
            }
        }
    }
}
