package io.pier.group;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * The answer to a {@link HeartbeatRequest}. Immutable.
 *
 * @param memberId null on errors
 * @param assignment topic id to sorted partitions; null means unchanged (never null on a successful
 *     join). Topic ids are in ascending order.
 */
public record HeartbeatResponse(
        Errors error,
        String errorMessage,
        String memberId,
        int memberEpoch,
        int heartbeatIntervalMs,
        Map<Uuid, List<Integer>> assignment) {

    static HeartbeatResponse error(Errors error, String message) {
        return new HeartbeatResponse(error, message, null, 0, 0, null);
    }
}
