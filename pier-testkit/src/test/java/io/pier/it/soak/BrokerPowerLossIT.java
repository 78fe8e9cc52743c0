package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.log.CrashPoint;
import io.pier.log.PowerLossFileIO;
import io.pier.server.Pier;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Power loss through the whole broker (reliability campaign, item 3): an in-process broker whose
 * segment files (every partition log, and the share-state, committed-offset and transaction logs)
 * go through {@link PowerLossFileIO} runs {@link MixedLoadSoak}'s mixed load; at a random moment the
 * power goes out: every byte not fsynced is dropped, the last unsynced write of a file possibly
 * torn, and every later I/O fails, so the broker stops as it does on any storage fault. It is then
 * started again on what the disk kept, and the oracle is checked after every restart and at the end.
 *
 * <p>What this does not cover: files outside the segment logs (indexes, checkpoints, cluster
 * metadata) are written with an fsync before they count (and indexes are rebuilt), so they are
 * left out of the simulation, as are directory entries, which Pier fsyncs after every create,
 * rename and delete.
 *
 * <p>{@code -Dpier.powerloss.broker.cycles=N} (default 10; the {@code soak} profile sets 200) and
 * {@code -Dpier.powerloss.broker.seed=N}; the seed is printed.
 */
@Timeout(value = 12, unit = TimeUnit.HOURS) // every wait inside is bounded; this only backs them up
class BrokerPowerLossIT {
    private static final long STOP_TIMEOUT_S = 30;
    /**
     * Crash points to arm, the ones on every produce's path more often: a roll of a small state
     * segment and a snapshot come seldom, and an armed point not reached in time is a plain loss.
     */
    private static final CrashPoint[] ARMED = {CrashPoint.AFTER_APPEND_BEFORE_FSYNC,
        CrashPoint.AFTER_APPEND_BEFORE_FSYNC, CrashPoint.AFTER_APPEND_BEFORE_FSYNC,
        CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE, CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE, CrashPoint.MID_SNAPSHOT,
        CrashPoint.MID_SEGMENT_ROLL};
    /** How long an armed crash point may take to be reached before the power goes anyway. */
    private static final long ARMED_WAIT_S = 3;

    @TempDir
    Path dataDir;

    @Test
    void shouldLoseNothingConfirmedAcrossPowerLossesUnderMixedLoad() throws Exception {
        int cycles = Integer.getInteger("pier.powerloss.broker.cycles", 10);
        long seed = Long.getLong("pier.powerloss.broker.seed", System.nanoTime());
        new MixedLoadSoak().run("BrokerPowerLossIT", new PoweredBroker(dataDir, freePort()), cycles, seed);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** An in-process broker on a simulated disk that can lose power. */
    private static final class PoweredBroker implements SoakBroker {
        private final Path dataDir;
        private final int port;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private PowerLossFileIO disk;
        private CountDownLatch stopped;
        private Pier pier;
        private long droppedBytes;
        private final Map<CrashPoint, Integer> crashesAtPoints = new EnumMap<>(CrashPoint.class);
        private int stoppedByItself;

        PoweredBroker(Path dataDir, int port) {
            this.dataDir = dataDir;
            this.port = port;
            for (String setting : MixedLoadSoak.BROKER_SETTINGS) {
                int eq = setting.indexOf('=');
                settings.put(setting.substring(0, eq), setting.substring(eq + 1));
            }
        }

        @Override
        public String bootstrapServers() {
            return "127.0.0.1:" + port;
        }

        @Override
        public void start(int run) throws Exception {
            disk = new PowerLossFileIO();
            stopped = new CountDownLatch(1);
            pier = Pier.builder().dataDir(dataDir).port(port).configs(settings).fileIO(disk)
                    .onFatal(stopped::countDown).start();
        }

        @Override
        public void assertAlive() {
            assertThat(stopped.getCount()).as("the broker stopped by itself, before any power loss").isOne();
        }

        /**
         * Three times in four the power goes at a named step of a durable write (a crash point armed
         * for one of its next arrivals: between an append and its fsync, say, so unsynced bytes are
         * there to lose), else at once, wherever the broker is.
         */
        @Override
        public void crash(Random random) throws Exception {
            if (random.nextInt(4) != 0) {
                CrashPoint point = ARMED[random.nextInt(ARMED.length)];
                disk.arm(point, 1 + random.nextInt(20));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ARMED_WAIT_S);
                while (!disk.crashed() && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                if (disk.crashed()) {
                    crashesAtPoints.merge(point, 1, Integer::sum);
                }
            }
            droppedBytes += disk.powerLoss(random);
            // The broker's next write or fsync fails and it shuts down (onFatal runs once it has
            // closed); a broker that touched no file meanwhile is closed here, on a dead disk.
            if (stopped.await(STOP_TIMEOUT_S, TimeUnit.SECONDS)) {
                stoppedByItself++;
            }
            pier.close();
        }

        @Override
        public void close() {
            if (pier != null) {
                pier.close();
            }
            System.out.printf("BrokerPowerLossIT: %d unsynced bytes dropped in all; power lost at crash points %s;"
                    + " the broker stopped by itself after %d of the power losses%n", droppedBytes, crashesAtPoints,
                    stoppedByItself);
        }
    }
}
