package io.pier.share;

import java.util.Objects;
import org.apache.kafka.common.protocol.Errors;

/**
 * Outcome of {@link SharePartition#acknowledge}: either a partition-level error (nothing changed)
 * or a {@link PendingChange} to persist and then commit or roll back.
 */
public final class AckResult {
    private final Errors error;
    private final PendingChange pending;

    private AckResult(Errors error, PendingChange pending) {
        this.error = error;
        this.pending = pending;
    }

    static AckResult failed(Errors error) {
        return new AckResult(Objects.requireNonNull(error), null);
    }

    static AckResult pending(PendingChange pending) {
        return new AckResult(Errors.NONE, Objects.requireNonNull(pending));
    }

    /** {@link Errors#NONE} when accepted. */
    public Errors error() {
        return error;
    }

    public boolean isError() {
        return error != Errors.NONE;
    }

    /** The change to persist; throws if this result is an error. */
    public PendingChange pending() {
        if (pending == null) {
            throw new IllegalStateException("acknowledgement failed with " + error);
        }
        return pending;
    }

    @Override
    public String toString() {
        return isError() ? "AckResult[" + error + "]" : "AckResult[" + pending + "]";
    }
}
