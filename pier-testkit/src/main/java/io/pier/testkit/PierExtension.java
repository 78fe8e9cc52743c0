package io.pier.testkit;

import io.pier.server.Pier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs an in-process Pier broker on 127.0.0.1 with an ephemeral port and
 * a temporary data folder, for the whole test class:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PierExtension PIER = PierExtension.withConfig("num.partitions", "3");
 * ... props.put("bootstrap.servers", PIER.bootstrapServers());
 * }</pre>
 *
 * {@link #restart()} stops the broker and starts a new one on the same data folder and port, for
 * tests of what survives a restart.
 *
 * <p>With the system property {@code pier.testkit.gateway=true} every such broker is a gateway
 * node (docs/scale-out.md) in front of its own {@link UpstreamKafka}, started with it and stopped
 * after it: the same tests then show the same behaviour through a gateway (pier-testkit's
 * {@code gateway-suite} profile runs the share-group suite that way).
 */
public final class PierExtension implements BeforeAllCallback, AfterAllCallback {
    /** Runs every extension's broker as a gateway in front of an upstream Kafka of its own. */
    public static final String GATEWAY_PROPERTY = "pier.testkit.gateway";
    private final Map<String, String> configs = new LinkedHashMap<>();
    private Path dataDir;
    private Pier pier;
    private UpstreamKafka upstream;

    public PierExtension() {}

    public static PierExtension withConfig(String... keyValues) {
        PierExtension ext = new PierExtension();
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("expected key, value pairs");
        }
        for (int i = 0; i < keyValues.length; i += 2) {
            ext.configs.put(keyValues[i], keyValues[i + 1]);
        }
        return ext;
    }

    public PierExtension config(String key, String value) {
        configs.put(key, value);
        return this;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    /** Starts the broker; {@link #beforeAll} does this for registered extensions. */
    public void start() throws Exception {
        dataDir = Files.createTempDirectory("pier-test-");
        if (Boolean.getBoolean(GATEWAY_PROPERTY) && upstream == null) {
            upstream = UpstreamKafka.builder().start();
            configs.put("pier.gateway.upstream.bootstrap.servers", upstream.bootstrapServers());
        }
        pier = Pier.builder().configs(configs).dataDir(dataDir).start();
    }

    /** The upstream Kafka in gateway mode ({@link #GATEWAY_PROPERTY}), else null. */
    public UpstreamKafka upstream() {
        return upstream;
    }

    public String bootstrapServers() {
        return pier.bootstrapServers();
    }

    /** host:port of the named listener, for a broker with several. */
    public String bootstrapServers(String listenerName) {
        return pier.bootstrapServers(listenerName);
    }

    public Pier pier() {
        return pier;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** Stops the broker cleanly and starts it again on the same data and port. */
    public void restart() throws Exception {
        int port = pier.port();
        pier.close();
        pier = Pier.builder().configs(configs).dataDir(dataDir).port(port).start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    public void stop() {
        if (pier != null) {
            pier.close();
            pier = null;
        }
        if (upstream != null) {
            try {
                upstream.close();
            } catch (IOException e) {
                // its temporary folder may be left behind; nothing else is
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            upstream = null;
            configs.remove("pier.gateway.upstream.bootstrap.servers");
        }
        if (dataDir != null) {
            try (Stream<Path> walk = Files.walk(dataDir)) {
                walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // leftover temp files do not affect other tests
            }
            dataDir = null;
        }
    }
}
