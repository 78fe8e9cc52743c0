package io.pier.cli;

import io.pier.server.BrokerConfig;
import io.pier.server.Pier;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.config.ConfigException;

/**
 * Command line: {@code pier start [--port N] [--data-dir DIR] [--config FILE] [--set key=value]}
 * runs a broker until Ctrl-C or SIGTERM, then stops it cleanly; {@code pier group ...} lists the
 * groups or shows one ({@link GroupCommand}); {@code pier share-group ...} prints one share group at
 * a glance ({@link ShareGroupCommand}); {@code pier dlq redrive ...} moves dead letters back to
 * their source topics ({@link DlqCommand}); {@code pier cds-training} is the
 * launcher's one-off run that records the classes a broker loads ({@link CdsTraining}).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        // Netty's allocator reports chunk allocations as JFR events when JFR is present; registering
        // them costs the first connection about 80 ms of class loading, for telemetry Pier never reads.
        // -Dio.netty.jfr.enabled=true turns it back on.
        System.setProperty("io.netty.jfr.enabled", System.getProperty("io.netty.jfr.enabled", "false"));
        if (args.length > 0 && (args[0].equals("share-group") || args[0].equals("group")
                || args[0].equals("cds-training") || args[0].equals("dlq"))) {
            // The Admin client logs its whole configuration at INFO; a one-shot command wants its table only.
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                    System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        }
        int code = run(args, System.out, System.err);
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Runs one command, printing to {@code out} and {@code err}; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            usage(out);
            return args.length == 0 ? 2 : 0;
        }
        if (args[0].equals("share-group")) {
            return ShareGroupCommand.run(args, out, err);
        }
        if (args[0].equals("group")) {
            return GroupCommand.run(args, out, err);
        }
        if (args[0].equals("dlq")) {
            return DlqCommand.run(args, out, err);
        }
        if (args[0].equals("cds-training")) {
            return CdsTraining.run(args, out, err);
        }
        boolean gateway = args[0].equals("gateway");
        if (!args[0].equals("start") && !gateway) {
            err.println("unknown command: " + args[0]);
            usage(err);
            return 2;
        }
        Map<String, String> props = new LinkedHashMap<>();
        Path dataDir = Path.of("data");
        Integer port = null;
        try {
            for (int i = 1; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--port" -> port = Integer.parseInt(value(args, ++i, a));
                    case "--data-dir" -> dataDir = Path.of(value(args, ++i, a));
                    case "--upstream-bootstrap" -> {
                        requireGateway(gateway, a);
                        props.put(BrokerConfig.GATEWAY_UPSTREAM_BOOTSTRAP, value(args, ++i, a));
                    }
                    case "--node-id" -> props.put(BrokerConfig.NODE_ID, value(args, ++i, a));
                    case "--config" -> props.putAll(load(Path.of(value(args, ++i, a))));
                    case "--set" -> {
                        String kv = value(args, ++i, a);
                        int eq = kv.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException("--set expects key=value, got " + kv);
                        }
                        props.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (gateway && !props.containsKey(BrokerConfig.GATEWAY_UPSTREAM_BOOTSTRAP)) {
                throw new IllegalArgumentException("pier gateway needs --upstream-bootstrap HOST:PORT (or "
                        + BrokerConfig.GATEWAY_UPSTREAM_BOOTSTRAP + " in --config)");
            }
        } catch (IOException | IllegalArgumentException e) {
            err.println("pier: " + e.getMessage());
            return 2;
        }
        if (props.containsKey("log.dirs") && !hasOption(args, "--data-dir")) {
            dataDir = Path.of(props.get("log.dirs"));
        }
        if (!props.containsKey("listeners")) {
            props.put("listeners", "PLAINTEXT://127.0.0.1:9092");
        }
        props.putIfAbsent(BrokerConfig.METRICS_PORT, String.valueOf(BrokerConfig.DEFAULT_METRICS_PORT));
        CountDownLatch stopped = new CountDownLatch(1);
        Pier.Builder builder = Pier.builder().configs(props).dataDir(dataDir).onFatal(() -> {
            stopped.countDown();
            Runtime.getRuntime().halt(1);
        });
        if (port != null) {
            builder.port(port);
        }
        Pier pier;
        try {
            pier = builder.start();
        } catch (ConfigException e) {
            err.println("pier: invalid configuration: " + e.getMessage());
            return 2;
        } catch (Exception e) {
            err.println("pier: cannot start: " + e);
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            pier.close();
            stopped.countDown();
        }, "pier-shutdown"));
        out.println("Pier " + (gateway ? "gateway " : "") + "is ready: bootstrap.servers=" + pier.bootstrapServers() + " listeners=" + pier.listeners()
                + " data=" + pier.dataDir().toAbsolutePath()
                + (pier.metricsPort() < 0 ? "" : " metrics=http://" + props.getOrDefault(BrokerConfig.METRICS_HOST,
                        "127.0.0.1") + ":" + pier.metricsPort() + "/metrics"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private static void requireGateway(boolean gateway, String option) {
        if (!gateway) {
            throw new IllegalArgumentException(option + " is an option of pier gateway");
        }
    }

    private static boolean hasOption(String[] args, String option) {
        for (String a : args) {
            if (a.equals(option)) {
                return true;
            }
        }
        return false;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static Map<String, String> load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        Map<String, String> out = new LinkedHashMap<>();
        p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k).trim()));
        return out;
    }

    private static void usage(PrintStream s) {
        s.println("usage: pier start [--port N] [--data-dir DIR] [--config FILE] [--set key=value ...]");
        s.println("       pier gateway --upstream-bootstrap HOST:PORT [--node-id N] [--port N] [--data-dir DIR] [--config FILE]");
        s.println("         [--set key=value ...]");
        s.println("  gateway: serves Kafka clients in front of an existing Kafka cluster, forwarding to it;");
        s.println("  upstream client settings as pier.gateway.upstream.<Kafka client setting>.");
        s.println("  Runs a Kafka-compatible broker on 127.0.0.1:9092 with its data in ./data.");
        s.println("  --config reads server.properties-style settings (Kafka's names).");
        s.println("  Metrics: http://127.0.0.1:9404/metrics (pier.metrics.port, pier.metrics.enable=false to turn off).");
        GroupCommand.usage(s);
        ShareGroupCommand.usage(s);
        DlqCommand.usage(s);
    }
}
