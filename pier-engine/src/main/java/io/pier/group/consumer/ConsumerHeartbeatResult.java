package io.pier.group.consumer;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * The answer to a {@link ConsumerHeartbeat}.
 *
 * @param assignment topic id (ascending) to sorted partitions the member may own now; null when
 *     unchanged
 */
public record ConsumerHeartbeatResult(
        Errors error,
        String errorMessage,
        String memberId,
        int memberEpoch,
        int heartbeatIntervalMs,
        Map<Uuid, List<Integer>> assignment) {

    static ConsumerHeartbeatResult error(Errors error, String message) {
        return new ConsumerHeartbeatResult(error, message, null, 0, 0, null);
    }
}
