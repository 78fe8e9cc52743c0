package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The nemesis soak (reliability scenario S50): {@link MixedLoadSoak}'s mixed load against a child
 * {@code pier start} that {@link NemesisBroker} hits, cycle after cycle, with one fault drawn at
 * random: SIGKILL or SIGTERM and a restart on the same data, a SIGSTOP past the lock and sometimes
 * past the clients' request timeout, a burst of connection resets, a latency spike or a partition
 * outlasting the lock, lost answers to one API, or a share consumer cut off and replaced. The
 * oracle is MixedLoadSoak's: checked after every fault and at the end (I1, idempotence, I5, I6,
 * I7, I11, committed offsets, atomic transactions), with the redelivery ratio by cause. Its I1
 * check takes one explanation for an acknowledged record the load never got, and only with
 * evidence from the proxy: the broker was seen handing the record out at the delivery limit, in
 * answers resets kept from the load, and the record is terminal (a lost hand-out counts as a
 * delivery, in Kafka 4.4 too).
 *
 * <p>{@code -Dpier.nemesis.cycles=N} (default 8, one of each fault in a random order; {@code
 * bench/nemesis-soak.sh} runs long ones), {@code -Dpier.nemesis.minutes=M} (stop starting cycles
 * after M minutes; the cycle count then defaults to no limit), {@code -Dpier.nemesis.seed=N}; the
 * seed is printed, and each cycle's fault.
 */
@Timeout(value = 12, unit = TimeUnit.HOURS) // every wait inside is bounded; this only backs them up
class NemesisSoakIT {
    /** Kept when the test fails, with the broker's output of every start, for a look at what went wrong. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dataDir;

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path logs;

    @Test
    void shouldKeepEveryInvariantUnderRandomBrokerNetworkAndConsumerFaults() throws Exception {
        Long minutes = Long.getLong("pier.nemesis.minutes");
        int cycles = Integer.getInteger("pier.nemesis.cycles", minutes == null ? 8 : Integer.MAX_VALUE);
        long seed = Long.getLong("pier.nemesis.seed", System.nanoTime());
        System.out.printf("NemesisSoakIT: data in %s, the broker's output in %s (both kept if the test fails)%n",
                dataDir, logs);
        NemesisBroker broker = new NemesisBroker(dataDir, logs);
        new MixedLoadSoak().run("NemesisSoakIT", broker, cycles, minutes == null ? null : Duration.ofMinutes(minutes),
                seed);

        // The deck hands out every kind once before any kind twice.
        Map<NemesisBroker.Kind, Integer> ran = broker.faultsRun();
        int total = ran.values().stream().mapToInt(Integer::intValue).sum();
        int kinds = NemesisBroker.Kind.values().length;
        if (minutes == null) {
            assertThat(total).as("faults run").isEqualTo(cycles);
        }
        for (NemesisBroker.Kind kind : NemesisBroker.Kind.values()) {
            assertThat(ran.getOrDefault(kind, 0)).as("%s faults in %d cycles", kind, total)
                    .isBetween(total / kinds, (total + kinds - 1) / kinds);
        }
    }
}
