package io.pier.it.faults;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies what is written to {@code System.err} (where the broker's log goes in tests) into a
 * buffer while it is open, still passing it on, so a test can check what the broker said.
 */
final class StderrTee implements AutoCloseable {
    private final PrintStream original;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    private StderrTee() {
        original = System.err;
        System.setErr(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                original.write(b);
                synchronized (copy) {
                    copy.write(b);
                }
            }

            @Override
            public void write(byte[] b, int off, int len) {
                original.write(b, off, len);
                synchronized (copy) {
                    copy.write(b, off, len);
                }
            }
        }, true, StandardCharsets.UTF_8));
    }

    static StderrTee start() {
        return new StderrTee();
    }

    /** Everything written since {@link #start()}. */
    String text() {
        synchronized (copy) {
            return copy.toString(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
