package io.pier.group;

import org.apache.kafka.common.protocol.Errors;

/** The answer to a SyncGroup: the member's assignment for the generation. */
public record ClassicSyncResult(Errors error, String protocolType, String protocolName, byte[] assignment) {
    static final byte[] EMPTY_ASSIGNMENT = new byte[0];

    public static ClassicSyncResult error(Errors error) {
        return new ClassicSyncResult(error, null, null, EMPTY_ASSIGNMENT);
    }
}
