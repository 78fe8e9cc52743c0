package io.pier.it.soak;

import java.nio.file.Path;

import java.util.List;
import java.util.Random;
import org.apache.kafka.common.TopicPartition;

/** The broker a {@link MixedLoadSoak} crashes: how it starts on its data, and how it dies. */
interface SoakBroker extends AutoCloseable {
    /** The same host:port across restarts, so the load's clients reconnect to the new broker. */
    String bootstrapServers();

    /** Starts the broker on its data folder; {@code run} counts the starts. */
    void start(int run) throws Exception;

    /** Fails (with what the broker said) if it stopped by itself. */
    void assertAlive() throws Exception;

    /** The broker dies at once, without a clean shutdown; {@link #start} may follow. */
    void crash(Random random) throws Exception;

    /**
     * Cycle {@code cycle}'s fault, which returns with the broker running again: by default a
     * {@link #crash} and a {@link #start} on the same data, the oracle told first. A broker with
     * faults that leave it running (a pause, a network fault) or that hit the load's clients
     * instead overrides it, and tells {@code load} only of what it does.
     */
    default void fault(int cycle, Random random, Load load) throws Exception {
        load.brokerGoingDown();
        crash(random);
        start(cycle);
    }

    /**
     * Whether the broker was seen on the wire handing {@code tp@offset} out with a delivery count
     * of at least {@code count}: in a ShareFetch answer it sent, whether or not the answer reached
     * its client. False where the broker's connections cannot be watched.
     */
    default boolean seenHandedOut(TopicPartition tp, long offset, int count) throws Exception {
        return false;
    }

    /**
     * The broker's data folder, for a check that reads its files once the broker is closed (the
     * transactional log's batch headers and markers around a violation); null where the test
     * cannot reach it.
     */
    default Path dataDir() {
        return null;
    }

    /** What a fault may tell, or do to, the load it hits. */
    interface Load {
        /**
         * The broker is about to go down (killed, stopped or losing power), taking every record
         * lock with it: the oracle must know before, so that it explains the redeliveries after.
         * Faults that leave the broker running do not call it.
         */
        void brokerGoingDown();

        /** The client ids of the load's share consumers now. */
        List<String> shareConsumers();

        /**
         * Ends share consumer {@code clientId} at once, without sending its acknowledgements or
         * leaving the group, as a process that dies does, and starts another in its place with a
         * new client id; returns once the old one has ended.
         */
        void replaceShareConsumer(String clientId) throws Exception;
    }

    @Override
    void close() throws Exception;
}
