package io.pier.group.consumer;

import io.pier.group.PartitionKey;
import java.util.List;
import java.util.Set;

/**
 * A ConsumerGroupHeartbeat (key 68) as the coordinator needs it, with the client id and host of
 * the request. Every nullable field means "unchanged since the last heartbeat".
 *
 * @param memberEpoch 0 to join, -1 to leave, -2 for a static member leaving for a while
 * @param rebalanceTimeoutMs -1 when unchanged
 * @param ownedPartitions the partitions the member owns now, or null when unchanged
 */
public record ConsumerHeartbeat(
        String groupId,
        String memberId,
        int memberEpoch,
        String instanceId,
        String rackId,
        int rebalanceTimeoutMs,
        List<String> subscribedTopicNames,
        String subscribedTopicRegex,
        String serverAssignor,
        Set<PartitionKey> ownedPartitions,
        String clientId,
        String clientHost) {

    public static final int JOIN_EPOCH = 0;
    public static final int LEAVE_EPOCH = -1;
    public static final int LEAVE_STATIC_EPOCH = -2;

    /** A request that carries every field, as sent on joining or after an error: it gets the whole assignment back. */
    boolean isFull() {
        return memberEpoch == JOIN_EPOCH
                || (rebalanceTimeoutMs != -1 && subscribedTopicNames != null && ownedPartitions != null);
    }
}
