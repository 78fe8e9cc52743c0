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
 * Power loss through the whole broker (reliability campaign, items 3 and 4): an in-process broker
 * whose every write in its data folder goes through {@link PowerLossFileIO} runs
 * {@link MixedLoadSoak}'s mixed load. That covers the segment and index files of every partition log
 * and of the share-state, committed-offset and transaction logs, the checkpoints (recovery points,
 * log start offsets, cluster metadata, producer-id blocks) and the directory entries that creating,
 * renaming and deleting change. At a random moment, or at an armed crash point, the power goes out:
 * every byte not fsynced is dropped, the last unsynced write of a file possibly torn, directory
 * changes not followed by an fsync of their directory may be undone (a new file vanishes, a rename
 * reverts, a deleted file comes back), and every later I/O fails, so the broker stops as it does on
 * any storage fault. It is then started again on what the disk kept, and the oracle is checked
 * after every restart and at the end.
 *
 * <p>{@code -Dpier.powerloss.broker.cycles=N} (default 6; the {@code soak} profile sets 200) and
 * {@code -Dpier.powerloss.broker.seed=N}; the seed is printed.
 */
@Timeout(value = 12, unit = TimeUnit.HOURS) // every wait inside is bounded; this only backs them up
class BrokerPowerLossIT {
    private static final long STOP_TIMEOUT_S = 30;
    /** A crash point to arm for one of its next {@code arrivals} arrivals. */
    private record Armed(CrashPoint point, int arrivals) {}

    /**
     * Crash points to arm, the ones on every produce's path more often: a snapshot comes seldom,
     * and an armed point not reached in time is a plain loss. A segment roll (of a small state
     * segment), a checkpoint (a recovery point per log every few seconds, a log start offset when a
     * state log drops its old segments) and a segment deletion come a few times a second at most,
     * so they are armed for one of their next few arrivals. A roll leaves the new segment's entry
     * unsynced until the next flush, and the checkpoint and deletion points stop before their
     * directory's fsync: a power loss there has directory changes to undo.
     */
    private static final Armed[] ARMED = {new Armed(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 20),
        new Armed(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 20), new Armed(CrashPoint.AFTER_APPEND_BEFORE_FSYNC, 20),
        new Armed(CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE, 20), new Armed(CrashPoint.AFTER_FSYNC_BEFORE_RESPONSE, 20),
        new Armed(CrashPoint.MID_SNAPSHOT, 20), new Armed(CrashPoint.MID_SEGMENT_ROLL, 2),
        new Armed(CrashPoint.CHECKPOINT_BEFORE_RENAME, 3), new Armed(CrashPoint.CHECKPOINT_BEFORE_DIRECTORY_FSYNC, 3),
        new Armed(CrashPoint.AFTER_DELETE_BEFORE_DIRECTORY_FSYNC, 1)};
    /** How long an armed crash point may take to be reached before the power goes anyway. */
    private static final long ARMED_WAIT_S = 3;

    @TempDir
    Path dataDir;

    /** Where the simulated disk keeps deleted files a power loss may bring back. */
    @TempDir
    Path graveyards;

    @Test
    void shouldLoseNothingConfirmedAcrossPowerLossesUnderMixedLoad() throws Exception {
        int cycles = Integer.getInteger("pier.powerloss.broker.cycles", 6);
        long seed = Long.getLong("pier.powerloss.broker.seed", System.nanoTime());
        new MixedLoadSoak().run("BrokerPowerLossIT", new PoweredBroker(dataDir, graveyards, freePort()), cycles, seed);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** An in-process broker on a simulated disk that can lose power. */
    private static final class PoweredBroker implements SoakBroker {
        private final Path dataDir;
        private final Path graveyards;
        private final int port;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private PowerLossFileIO disk;
        private CountDownLatch stopped;
        private Pier pier;
        private long droppedBytes;
        private long entriesUndone;
        private final Map<CrashPoint, Integer> crashesAtPoints = new EnumMap<>(CrashPoint.class);
        private int stoppedByItself;

        PoweredBroker(Path dataDir, Path graveyards, int port) {
            this.dataDir = dataDir;
            this.graveyards = graveyards;
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
        public Path dataDir() {
            return dataDir;
        }

        @Override
        public void start(int run) throws Exception {
            disk = new PowerLossFileIO(graveyards);
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
         * there to lose, or between a checkpoint's rename and its directory's fsync), else at once,
         * wherever the broker is.
         */
        @Override
        public void crash(Random random) throws Exception {
            if (random.nextInt(4) != 0) {
                Armed armed = ARMED[random.nextInt(ARMED.length)];
                CrashPoint point = armed.point();
                disk.arm(point, 1 + random.nextInt(armed.arrivals()));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ARMED_WAIT_S);
                while (!disk.crashed() && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                if (disk.crashed()) {
                    crashesAtPoints.merge(point, 1, Integer::sum);
                }
            }
            droppedBytes += disk.powerLoss(random);
            entriesUndone += disk.entriesUndone();
            if (!disk.undoneAtLastPowerLoss().isEmpty()) {
                System.out.printf("BrokerPowerLossIT: the power loss undid %s%n", disk.undoneAtLastPowerLoss());
            }
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
            System.out.printf("BrokerPowerLossIT: %d unsynced bytes dropped in all, %d unsynced directory changes"
                    + " undone; power lost at crash points %s; the broker stopped by itself after %d of the power"
                    + " losses%n", droppedBytes, entriesUndone, crashesAtPoints, stoppedByItself);
        }
    }
}
