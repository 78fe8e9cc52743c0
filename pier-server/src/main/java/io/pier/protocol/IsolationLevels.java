package io.pier.protocol;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.InvalidRequestException;

/** The isolation_level field of Fetch and ListOffsets, read as a client error when unknown. */
final class IsolationLevels {
    private IsolationLevels() {}

    /**
     * kafka-clients' {@code IsolationLevel.forId} throws IllegalArgumentException for anything but
     * 0 and 1, which would reach the client as UNKNOWN_SERVER_ERROR: it is a bad request.
     */
    static IsolationLevel of(byte id) {
        if (id != IsolationLevel.READ_UNCOMMITTED.id() && id != IsolationLevel.READ_COMMITTED.id()) {
            throw new InvalidRequestException("unknown isolation level " + id);
        }
        return IsolationLevel.forId(id);
    }
}
