package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An older kafka-clients (copied by the build into target/old-clients/VERSION) produces and
 * share-consumes against Pier, in a child JVM whose class path holds only that client's jars.
 */
@Timeout(120)
class OldClientSmokeIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @ParameterizedTest
    @ValueSource(strings = {"4.2.0", "4.3.1"})
    void shouldProduceAndShareConsumeWithOldClient(String version) throws Exception {
        Path jars = Path.of(System.getProperty("pier.oldClients.dir", "target/old-clients"), version);
        Path program = Path.of(System.getProperty("pier.oldClients.src", "src/test/old-client"), "OldClientSmoke.java");
        assertThat(jars.resolve("kafka-clients-" + version + ".jar")).as("copied by the pier-testkit build").exists();
        assertThat(program).exists();
        String topic = "old-client-" + version.replace('.', '-');
        String group = "g-old-client-" + version.replace('.', '-');
        clients.createTopicReadFromEarliest(topic, 1, group);

        Path output = Files.createTempFile("old-client-smoke-", ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(List.of(java, "-cp", jars + File.separator + "*", program.toString(),
                PIER.bootstrapServers(), topic, group))
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        boolean exited = child.waitFor(90, TimeUnit.SECONDS);
        if (!exited) {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = Files.readString(output, StandardCharsets.UTF_8);
        Files.deleteIfExists(output);
        System.out.println("Old client " + version + " output:\n" + out);
        assertThat(exited).as("child JVM exited; output:\n" + out).isTrue();
        assertThat(child.exitValue()).as("exit code; output:\n" + out).isZero();
        assertThat(out).contains("OLD-CLIENT-SMOKE version=" + version + " produced=50 received=50 accepted=50"
                + " ackErrors=0 result=OK");
    }
}
