package io.pier.it.soak;

import java.util.Random;

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

    @Override
    void close() throws Exception;
}
