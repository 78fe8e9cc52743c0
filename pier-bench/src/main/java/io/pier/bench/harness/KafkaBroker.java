package io.pier.bench.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;

/**
 * Apache Kafka as a single-node KRaft broker and controller in one JVM, its settings left at their
 * defaults except what one node needs (replication factor 1 for the internal topics) and the
 * loopback listeners, and optionally an fsync of every appended batch; for the security rows also an
 * SSL and a SASL_SSL listener ({@link Security#serverSettings}). Formatted before the start-up
 * clock starts.
 */
final class KafkaBroker extends BrokerProcess {
    private final Path libDir;
    private final int controllerPort;
    private final Path props;
    private final Path log4j;
    private final boolean fsync;
    /** Broker settings added after the others (a lower {@code group.min.session.timeout.ms}, say); none by default. */
    Map<String, String> extraSettings = Map.of();

    /**
     * @param fsync flush every append to disk before answering: {@code log.flush.interval.messages=1}
     *     makes the log fsync after each appended batch (on the request path, so acks=all waits for
     *     it), which covers data topics and the internal offsets and share-state topics alike.
     *     {@code log.flush.interval.ms=0} is set too, though it only acts through the periodic
     *     flusher, which {@code log.flush.scheduler.interval.ms} (default: never) leaves off.
     */
    KafkaBroker(String name, List<String> jvmFlags, Path workDir, Path libDir, boolean fsync) throws IOException {
        super(name, jvmFlags, workDir);
        this.libDir = libDir;
        this.fsync = fsync;
        this.controllerPort = freePort();
        this.props = workDir.resolve("server.properties");
        this.log4j = workDir.resolve("log4j2.properties");
    }

    @Override
    void prepare() throws Exception {
        String listeners = "PLAINTEXT://127.0.0.1:" + port + securityListeners()
                + ",CONTROLLER://127.0.0.1:" + controllerPort;
        String securityMap = security == null ? "" : ",SSL:SSL,SASL_SSL:SASL_SSL";
        Files.writeString(props, String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.bootstrap.servers=127.0.0.1:" + controllerPort,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT" + securityMap,
                "listeners=" + listeners,
                "advertised.listeners=" + listeners,
                "log.dirs=" + workDir.resolve("data"),
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                fsync ? "log.flush.interval.messages=1\nlog.flush.interval.ms=0" : "",
                security == null ? "" : propertiesLines(security.serverSettings()),
                propertiesLines(extraSettings),
                ""));
        // Like the binary distribution: INFO to a file (here the process output file).
        Files.writeString(log4j, String.join("\n",
                "status = error",
                "appender.out.type = Console",
                "appender.out.name = OUT",
                "appender.out.layout.type = PatternLayout",
                "appender.out.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.out.ref = OUT",
                "logger.kafka.name = kafka",
                "logger.kafka.level = INFO",
                "logger.request.name = kafka.request.logger",
                "logger.request.level = WARN",
                ""));
        List<String> cmd = new ArrayList<>(List.of(javaExecutable(), "-Xmx256m",
                "-Dlog4j2.configurationFile=" + log4j, "-cp", libDir.resolve("*").toString(),
                "kafka.tools.StorageTool", "format", "--standalone",
                "-t", Uuid.randomUuid().toString(), "-c", props.toString()));
        Process format = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(workDir.resolve("format.out").toFile()).start();
        if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
            throw new IllegalStateException("kafka storage format failed, see " + workDir.resolve("format.out"));
        }
    }

    /** {@code key=value} lines, with the characters a properties file treats specially escaped. */
    static String propertiesLines(Map<String, String> settings) {
        StringBuilder sb = new StringBuilder();
        settings.forEach((k, v) -> sb.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        return sb.toString().stripTrailing();
    }

    @Override
    List<String> command() {
        return List.of("-Dlog4j2.configurationFile=" + log4j, "-Dkafka.logs.dir=" + workDir,
                "-cp", libDir.resolve("*").toString(), "kafka.Kafka", props.toString());
    }
}
