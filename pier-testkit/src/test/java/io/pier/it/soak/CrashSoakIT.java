package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ChildBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash soak (reliability campaign, item 2): {@code pier start} in a child process is SIGKILLed
 * at random moments under {@link MixedLoadSoak}'s mixed load and restarted on the same data, cycle
 * after cycle, with the oracle checked after every restart and at the end.
 *
 * <p>{@code -Dpier.crashsoak.cycles=N} (default 6; {@code bench/crash-soak.sh N} runs long ones)
 * and {@code -Dpier.crashsoak.seed=N}; the seed is printed.
 */
@Timeout(value = 12, unit = TimeUnit.HOURS) // every wait inside is bounded; this only backs them up
class CrashSoakIT {
    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void shouldLoseNothingAcrossKillNineUnderMixedLoad() throws Exception {
        int cycles = Integer.getInteger("pier.crashsoak.cycles", 6);
        long seed = Long.getLong("pier.crashsoak.seed", System.nanoTime());
        // A time budget ends a long campaign with its report, at the cycles done, where a killed run says nothing.
        Integer minutes = Integer.getInteger("pier.crashsoak.minutes");
        ChildBroker child = new ChildBroker(dataDir, scratch, MixedLoadSoak.BROKER_SETTINGS.toArray(String[]::new));
        new MixedLoadSoak().run("CrashSoakIT", new KilledChild(child), cycles,
                minutes == null ? null : Duration.ofMinutes(minutes), seed);
    }

    /** A child process, killed with SIGKILL. */
    private record KilledChild(ChildBroker child) implements SoakBroker {
        @Override
        public String bootstrapServers() {
            return child.bootstrapServers();
        }

        @Override
        public void start(int run) throws Exception {
            child.start(run);
        }

        @Override
        public void assertAlive() throws Exception {
            child.assertAlive();
        }

        @Override
        public void crash(Random random) throws Exception {
            assertThat(child.kill()).as("broker died").isTrue();
        }

        @Override
        public void close() throws Exception {
            child.close();
        }
    }
}
