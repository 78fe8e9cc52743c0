package io.pier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start that fails stops what it had started: the listener is built on a thread of its own
 * from the first moment of a start, so a failure anywhere after that must still close its event
 * loops.
 */
@Timeout(60)
class FailedStartTest {
    @TempDir
    Path dir;

    @Test
    void shouldStopTheListenerWhenTheDataFolderIsTaken() throws Exception {
        try (Pier first = Pier.builder().dataDir(dir).start()) {
            Set<Thread> before = Thread.getAllStackTraces().keySet();

            // In one JVM the JDK refuses the second lock itself; another process gets an IOException.
            assertThatThrownBy(() -> Pier.builder().dataDir(dir).start())
                    .isInstanceOfAny(IOException.class, OverlappingFileLockException.class);

            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(threadsStartedSince(before)).isEmpty());
            assertThat(first.bootstrapServers()).isNotEmpty();
        }
    }

    @Test
    void shouldStopTheStartNamingTheSettingOfAMissingKeyStore() {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        String missing = dir.resolve("missing.p12").toString();

        assertThatThrownBy(() -> Pier.builder().dataDir(dir.resolve("data"))
                .config("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0")
                .config("ssl.keystore.type", "PKCS12")
                .config("listener.name.ssl.ssl.keystore.location", missing)
                .start())
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("listener.name.ssl.ssl.keystore.location").hasMessageContaining(missing);

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(threadsStartedSince(before)).isEmpty());
    }

    private static Set<String> threadsStartedSince(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t) && t.isAlive())
                .map(Thread::getName)
                .filter(name -> !name.startsWith("awaitility"))
                .collect(Collectors.toSet());
    }
}
